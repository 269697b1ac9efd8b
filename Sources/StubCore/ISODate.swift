/// ISO 8601 timestamps in UTC, formatted without Foundation so page generation stays cheap and thread-free.
public enum ISODate {
    /// `2026-11-20T18:00:00Z`, or `2026-11-20T18:00:00.123Z` when `millis` is given.
    public static func format(epochSeconds: Int64, millis: Int? = nil) -> String {
        let days = floorDiv(epochSeconds, 86_400)
        let secondsOfDay = epochSeconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        let hh = secondsOfDay / 3600, mm = (secondsOfDay % 3600) / 60, ss = secondsOfDay % 60
        var s = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(hh, 2)):\(pad(mm, 2)):\(pad(ss, 2))"
        if let millis { s += ".\(pad(Int64(millis), 3))" }
        return s + "Z"
    }

    /// Seconds since 1970 for a UTC calendar date and time.
    public static func epoch(year: Int64, month: Int64, day: Int64, hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0) -> Int64 {
        days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        (a >= 0 ? a : a - b + 1) / b
    }

    // Howard Hinnant's civil-from-days and days-from-civil algorithms.
    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
