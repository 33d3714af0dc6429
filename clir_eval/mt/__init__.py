"""MT metrics stage: the metric interface and registry (base), sacrebleu-backed and type-based metrics, resampling.

Importing the package registers the built-in metrics; a module holding new metrics is added here.
"""

# The order of these imports is the metrics' registration order, so their listing order: not sorted.
# isort: off
from . import sacrebleu_metrics, typebased  # noqa: F401  (registration order = listing order)
from . import fluency, recognition  # noqa: F401,E402
from . import neural  # noqa: F401,E402
# isort: on
