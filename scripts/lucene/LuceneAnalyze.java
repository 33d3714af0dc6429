// Analyzes texts with Lucene (reference of the language analyzers; see scripts/make_lucene_reference.py).
// Args: chain texts.txt. texts.txt: one text per line. Prints one line per text: its terms, separated by
// U+0001 (a term never contains it). Chains:
//   chain:<stop resource>:<snowball|plain|none>:<Snowball stemmer or ->  StandardTokenizer, CJKWidthFilter,
//       LowerCaseFilter, CJKBigramFilter, StopFilter (Lucene's list, loaded by Lucene's WordlistLoader), SnowballFilter
//   cjk | german | french | russian | ...: Lucene's own analyzer of that name (CJKAnalyzer, GermanAnalyzer...)
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.WordlistLoader;
import org.apache.lucene.analysis.cjk.CJKAnalyzer;
import org.apache.lucene.analysis.cjk.CJKBigramFilter;
import org.apache.lucene.analysis.cjk.CJKWidthFilter;
import org.apache.lucene.analysis.de.GermanAnalyzer;
import org.apache.lucene.analysis.fr.FrenchAnalyzer;
import org.apache.lucene.analysis.ru.RussianAnalyzer;
import org.apache.lucene.analysis.snowball.SnowballFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.util.IOUtils;

public class LuceneAnalyze {
  static CharArraySet stopSet(String resource, String format) throws Exception {
    if (format.equals("none")) return CharArraySet.EMPTY_SET;
    Reader r = IOUtils.getDecodingReader(CJKAnalyzer.class.getClassLoader().getResourceAsStream(resource), StandardCharsets.UTF_8);
    return format.equals("snowball") ? WordlistLoader.getSnowballWordSet(r) : WordlistLoader.getWordSet(r, "#");
  }

  static Analyzer chain(String resource, String format, String stemmer) throws Exception {
    CharArraySet stop = stopSet(resource, format);
    return new Analyzer() {
      @Override
      protected TokenStreamComponents createComponents(String field) {
        Tokenizer src = new StandardTokenizer();
        TokenStream ts = new CJKWidthFilter(src);
        ts = new LowerCaseFilter(ts);
        ts = new CJKBigramFilter(ts);
        ts = new StopFilter(ts, stop);
        if (!stemmer.equals("-")) ts = new SnowballFilter(ts, stemmer);
        return new TokenStreamComponents(src, ts);
      }
    };
  }

  public static void main(String[] args) throws Exception {
    String spec = args[0];
    Analyzer a;
    if (spec.startsWith("chain:")) {
      String[] p = spec.split(":");
      a = chain(p[1], p[2], p[3]);
    } else if (spec.equals("cjk")) {
      a = new CJKAnalyzer();
    } else if (spec.equals("german")) {
      a = new GermanAnalyzer();
    } else if (spec.equals("french")) {
      a = new FrenchAnalyzer();
    } else if (spec.equals("russian")) {
      a = new RussianAnalyzer();
    } else {
      throw new IllegalArgumentException("unknown chain " + spec);
    }
    StringBuilder out = new StringBuilder();
    for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
      List<String> terms = new ArrayList<>();
      try (TokenStream ts = a.tokenStream("body", line)) {
        CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
        ts.reset();
        while (ts.incrementToken()) terms.add(term.toString());
        ts.end();
      }
      out.append(String.join("\u0001", terms)).append('\n');
    }
    System.out.print(out);
  }
}
