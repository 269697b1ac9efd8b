import JSONTokens
import Foundation

/// Small wording helpers shared by every front end.
public enum Wording {
    /// `just now`, `45 s ago`, `12 min ago`, `3 h ago`, `2 d ago`.
    public static func age(of date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        switch seconds {
        case ..<5: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3600: return "\(seconds / 60) min ago"
        case ..<86_400: return "\(seconds / 3600) h ago"
        default: return "\(seconds / 86_400) d ago"
        }
    }

    /// Seconds until `age(of: date, now:)` says something else (each unit's text changes at its next step).
    public static func secondsUntilAgeChanges(of date: Date, now: Date) -> Double {
        let elapsed = max(0, now.timeIntervalSince(date))
        let step: Double
        switch elapsed {
        case ..<5: return 5 - elapsed
        case ..<60: step = 1
        case ..<3600: step = 60
        case ..<86_400: step = 3600
        default: step = 86_400
        }
        return step - elapsed.truncatingRemainder(dividingBy: step)
    }

    /// `1,250`.
    public static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return n < 0 ? "-" + out : out
    }

    /// `$4.99`, `free`, `4.99 EUR`.
    public static func price(cents: Int?, currency: String?) -> String {
        guard let cents else { return "" }
        if cents == 0 { return "free" }
        let amount = "\(cents / 100).\(cents % 100 < 10 ? "0" : "")\(cents % 100)"
        return currency == nil || currency == "USD" ? "$" + amount : amount + " " + (currency ?? "")
    }
}

/// Re-indents JSON text for the request inspector, keeping key order; cut or invalid JSON is indented
/// as far as it goes (it never throws: the inspector shows whatever came).
public enum JSONPretty {
    public static func format(_ text: String, indent: String = "  ") -> String {
        let bytes = Array(text.utf8)
        return JSONText.pretty(bytes, tokens: JSONTokenizer.tokens(bytes), indent: indent)
    }
}
