import Foundation

/// ISO 8601 / RFC 3339 timestamps as the contract allows them: `2022-08-18T02:30:00Z`, with or without
/// fractional seconds (any number of digits), with `Z` or an offset (`+02:00`, `+0200`, `-05`).
public enum ISO8601 {
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// The same, from the bytes of the text (a JSON string's, with no String made).
    public static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Date? {
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= b.count else { return nil }
            var v = 0
            for k in i..<(i + digits) {
                guard (48...57).contains(b[k]) else { return nil }
                v = v * 10 + Int(b[k] - 48)
            }
            i += digits
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")),
              let day = number(2)
        else { return nil }
        guard i < b.count, [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(b[i]) else { return nil }
        i += 1
        guard let hour = number(2), expect(UInt8(ascii: ":")), let minute = number(2), expect(UInt8(ascii: ":")),
              let second = number(2)
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, (48...57).contains(b[i]) {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        guard i < b.count else { return nil }  // a zone is required: local times are ambiguous
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = number(2), oh <= 23 else { return nil }
            var om = 0
            if i < b.count {
                _ = expect(UInt8(ascii: ":"))
                guard let m = number(2), m <= 59 else { return nil }
                om = m
            }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count, (1...12).contains(month), (1...31).contains(day), day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// `2026-11-20T18:04:11Z`, or with milliseconds when the date has them.
    public static func format(_ date: Date) -> String {
        let totalMillis = Int((date.timeIntervalSince1970 * 1000).rounded())
        let whole = totalMillis >= 0 ? totalMillis / 1000 : (totalMillis - 999) / 1000
        let millis = totalMillis - whole * 1000
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let secs = whole - days * 86_400
        let (y, m, d) = civilFromDays(days)
        // Digits by hand: `String(format:)` cost more than the rest of a history row's JSON line.
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func digits(_ n: Int, _ width: Int) {
            if n < 0 { out.append(UInt8(ascii: "-")) }
            let text = String(abs(n)).utf8
            for _ in 0..<max(0, width - text.count) { out.append(UInt8(ascii: "0")) }
            out.append(contentsOf: text)
        }
        digits(y, 4); out.append(UInt8(ascii: "-")); digits(m, 2); out.append(UInt8(ascii: "-")); digits(d, 2)
        out.append(UInt8(ascii: "T")); digits(secs / 3600, 2); out.append(UInt8(ascii: ":")); digits(secs % 3600 / 60, 2)
        out.append(UInt8(ascii: ":")); digits(secs % 60, 2)
        if millis > 0, millis < 1000 { out.append(UInt8(ascii: ".")); digits(millis, 3) }
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func daysFromCivil(year y0: Int, month m: Int, day d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// (year, month, day) of a day number (days since 1970-01-01), proleptic Gregorian.
    public static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
    }
}
