import java.io.*;
import java.util.*;

/** Reads a line protocol on stdin and prints each outcome: one line per call. */
public final class Replay {
    static String key(String hex) {
        StringBuilder sb = new StringBuilder();
        if (hex.equals("-")) return "";
        for (String cp : hex.split(",")) sb.appendCodePoint(Integer.parseInt(cp, 16));
        return sb.toString();
    }
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Solution.Limiter l = null;
        Solution.FixedWindow fw = null;
        String line;
        PrintStream out = System.out;
        while ((line = in.readLine()) != null) {
            String[] t = line.split(" ");
            try {
                switch (t[0]) {
                    case "new" -> { l = new Solution.Limiter(new Solution.Policy(Long.parseLong(t[1]), Long.parseLong(t[2]), Long.parseLong(t[3])), Integer.parseInt(t[4])); out.println("ok"); }
                    case "fw" -> { fw = new Solution.FixedWindow(Long.parseLong(t[1])); out.println("ok"); }
                    case "fwallow" -> out.println(fw.allow(Long.parseLong(t[1])) ? "admitted" : "rejected");
                    case "allow" -> { var d = l.allow(key(t[1]), Long.parseLong(t[2]), Long.parseLong(t[3])); out.println("decision " + d.allowed() + " " + d.wholeTokens() + " " + d.retryAfterNanos()); }
                    case "evict" -> out.println("evicted " + l.evictFull(Long.parseLong(t[1])));
                    case "replace" -> { l.replacePolicy(new Solution.Policy(Long.parseLong(t[1]), Long.parseLong(t[2]), Long.parseLong(t[3])), Long.parseLong(t[4]), Long.parseLong(t[5])); out.println("replaced"); }
                    case "count" -> out.println("key_count " + l.keyCount());
                    default -> out.println("bad " + line);
                }
            } catch (RuntimeException e) {
                out.println("error " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }
}
