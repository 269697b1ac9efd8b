import TerminalText
import ShopAPI
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
    /// `45 s`, `3 min 20 s`, `1 h 5 min`.
    public static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return s % 60 == 0 ? "\(s / 60) min" : "\(s / 60) min \(s % 60) s" }
        return s % 3600 / 60 == 0 ? "\(s / 3600) h" : "\(s / 3600) h \(s % 3600 / 60) min"
    }

    /// `+7`, `−7` (a true minus sign), `±0`.
    public static func signedDelta(_ n: Int) -> String {
        n > 0 ? "+" + grouped(n) : n < 0 ? "−" + grouped(n).dropFirst() : "±0"
    }

    public static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return n < 0 ? "-" + out : out
    }

    /// `$4.99`, `free`, `4.99 EUR`; a negative amount (which the contract forbids, and the watchdog
    /// flags) as `−$0.99` or `−1.05 EUR`, with a true minus sign before the currency sign.
    public static func price(cents: Int?, currency: String?) -> String {
        guard let cents else { return "" }
        if cents == 0 { return "free" }
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        let amount = "\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
        let sign = cents < 0 ? "−" : ""
        return currency == nil || currency == "USD" ? sign + "$" + amount : sign + amount + " " + (currency ?? "")
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

/// Dates as every front end writes them (the TUI's tables, `print`'s text, the bug report), by
/// arithmetic on the proleptic Gregorian calendar: a history screen formats dozens a frame and
/// `print history --all` one a row, where a `DateFormatter` or `Calendar` costs microseconds each.
public enum DateText {
    /// `2026-11-21 21:20` in `zone`.
    public static func minute(_ date: Date, _ zone: TimeZone) -> String {
        let (day, seconds) = local(date, zone)
        return day + " \(two(seconds / 3600)):\(two(seconds % 3600 / 60))"
    }

    /// `2026-11-21` in `zone`.
    public static func day(_ date: Date, _ zone: TimeZone) -> String { local(date, zone).day }

    /// `14:03:27` in `zone` (the Checks and Live tabs' rows).
    public static func timeOfDay(_ date: Date, _ zone: TimeZone) -> String {
        let seconds = local(date, zone).seconds
        return "\(two(seconds / 3600)):\(two(seconds % 3600 / 60)):\(two(seconds % 60))"
    }

    /// `2026-11-23 14:05:09Z`.
    public static func utcSeconds(_ date: Date) -> String {
        let utc = TimeZone(secondsFromGMT: 0) ?? .current
        return day(date, utc) + " " + timeOfDay(date, utc) + "Z"
    }

    /// The start of the day `year-month-day` in `zone` and of the day after; nil when there is no such
    /// day (2026-02-30).
    public static func dayBounds(year: Int, month: Int, day: Int, zone: TimeZone) -> (start: Date, next: Date)? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let start = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.component(.day, from: start) == day,
              let next = calendar.date(byAdding: .day, value: 1, to: start) else { return nil }
        return (start, next)
    }

    static func local(_ date: Date, _ zone: TimeZone) -> (day: String, seconds: Int) {
        let local = Int((date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))).rounded(.down))
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let (year, month, day) = ISO8601.civilFromDays(days)
        return ("\(year)-\(two(month))-\(two(day))", local - days * 86_400)
    }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}

/// The cells of a history entry's row, the same in the TUI's list and `print`'s tables: the date (to
/// the minute, in `zone`), who, the product (its name when known), the amount.
public enum HistoryColumns {
    public static let titles = ["DATE", "CREATOR", "PRODUCT", "AMOUNT", "COMMENTS"]

    public static func cells(_ e: CheerHistoryEntry, product: String? = nil, zone: TimeZone) -> [String] {
        [DateText.minute(e.date, zone), Sanitizer.line(e.creator), Sanitizer.line(product ?? e.product), Wording.grouped(e.amount)]
    }

    /// `print`'s text row: the cells and the number of comments (`—` when the entry has none).
    public static func printed(_ e: CheerHistoryEntry, zone: TimeZone) -> [String] {
        cells(e, zone: zone) + [e.comments.map { String($0.count) } ?? "—"]
    }

    /// The line that stands for an entry the app could not read (in `print`'s text and the History
    /// tab): where it stood as the warnings write it (`history[2] of page 3`), its id, the reason.
    public static func unreadable(_ u: UnreadableEntry, page: Int?) -> String {
        "⚠ unreadable entry \(ItemPosition.historyEntry(u, page: page))\(u.id.map { " (\(Sanitizer.line($0)))" } ?? ""): \(Sanitizer.line(u.reason))"
    }
}
