import Foundation
import HTTPTypes
import JSONTokens

/// The rules the contract implies beyond what its schemas state: what its words and its other
/// operations say about a field (docs/checks.md, "Rules the contract implies", one row a field). Each
/// reads only what it needs of an answer: a history page's summary (already made from its tokens), the
/// pack list's identifiers (one walk over its tokens), or the few fields of a small body.
struct ImpliedRules: Sendable {
    /// How far a date may lie ahead of this machine's clock before it is in the future: the two clocks
    /// may disagree by this much (the server's and the tester's).
    static let skew: TimeInterval = 300
    /// At most this many findings of one rule in one answer (a server whose clock is a year ahead dates
    /// every entry in the future: five say it).
    static let limit = 5

    /// This machine's clock (a test fixes it).
    var now: @Sendable () -> Date = { Date() }

    /// A history page: each entry's `amount` is a cheer — spendCheer takes an `amount` of at least 1,
    /// and the history is "every time the user cheered for a product" — so 1 or more; its `date` is a
    /// time the user cheered, so not ahead of the clock; `total_count` counts at least the entries of
    /// the page in hand.
    /// `serverClock` is the answer's own `Date` header when it has one: the server's clock, so a tester's
    /// machine whose clock is wrong never makes the server's dates "in the future".
    func history(_ summary: HistorySummary, serverClock: Date? = nil) -> [Finding] {
        guard let entries = summary.entries else { return [] }
        var findings: [Finding] = []
        let reference = serverClock ?? now()
        let clock = serverClock == nil ? "this machine's clock" : "the server's own clock (its Date header)"
        let latest = reference.addingTimeInterval(Self.skew)
        var low = 0, ahead = 0
        for (i, entry) in entries.enumerated() {
            if let amount = entry.amount, amount < 1, low < Self.limit {
                low += 1
                findings.append(Finding(check: .entryAmount, expected: "history[\(i)].amount ≥ 1 (a cheer: spendCheer's amount has minimum 1)",
                                        actual: "\(amount)", place: .field(path: "history[\(i)].amount", rule: .minimum)))
            }
            if let date = entry.date, date > latest, ahead < Self.limit {
                ahead += 1
                findings.append(Finding(check: .futureDate, expected: "history[\(i)].date not after \(clock) (\(Self.stamp(reference)), \(Int(Self.skew / 60)) min allowed)",
                                        actual: "\(Self.stamp(date)), \(Self.span(date.timeIntervalSince(reference))) ahead",
                                        place: .field(path: "history[\(i)].date", rule: .notAhead)))
            }
        }
        if let total = summary.totalCount, entries.count > total {
            findings.append(Finding(check: .paging, expected: "total_count at least the \(entries.count) entries of this page", actual: "total_count \(total)",
                                    place: .field(path: "total_count", rule: .minimum)))
        }
        return findings
    }

    /// The pack list: an `identifier` names one pack (spendCheer's `product` is "Identifier of the
    /// Audio Pack cheered for"), so none is in the list twice.
    static func packs(_ bytes: UnsafeBufferPointer<UInt8>, _ tokens: [JSONToken]) -> [Finding] {
        var findings: [Finding] = []
        var seen: [String: Int] = [:]
        for (i, identifier) in packIdentifiers(bytes, tokens).enumerated() {
            guard let identifier else { continue }
            if let first = seen[identifier] {
                if findings.count < limit {
                    findings.append(Finding(check: .duplicate, expected: "each pack identifier once in the list (spendCheer's product names one pack by it)",
                                            actual: "“\(identifier.prefix(60))” at packs[\(first)] and packs[\(i)]",
                                            place: .field(path: "packs[\(i)].identifier", rule: .unique)))
                }
            } else {
                seen[identifier] = i
            }
        }
        return findings
    }

    /// Each pack's `identifier` when it is a string (nil for a pack that is not an object or has none),
    /// in list order; empty when the body is not an object with a `packs` array.
    static func packIdentifiers(_ bytes: UnsafeBufferPointer<UInt8>, _ tokens: [JSONToken]) -> [String?] {
        let packsKey = Array("packs".utf8), identifierKey = Array("identifier".utf8)
        var c = JSONCursor(bytes: bytes, tokens: tokens)
        guard c.current?.kind == .beginObject else { return [] }
        c.index += 1
        while let key = c.current, key.kind == .string {
            c.index += 2
            guard let value = c.current else { return [] }
            if c.string(key, equals: packsKey), value.kind == .beginArray {
                return c.elements(nil as String?) { identifier, c, key, value in
                    if value.kind == .string, c.string(key, equals: identifierKey) { identifier = c.string(value) }
                }
            }
            guard c.skipValue(), c.current?.kind == .comma else { return [] }
            c.index += 1
        }
        return []
    }

    /// A balance read (getBalance) or credited (purchaseCheer): "Cheer units; may be 0", and spendCheer
    /// refuses what the balance cannot pay ("402 when the balance is too low; nothing is spent then"),
    /// so never below 0. (A spend's own answer is `spend-refused`.)
    static func balance(_ answer: JSONValue) -> [Finding] {
        guard case let .object(fields) = answer, case let .int(balance)? = fields["balance"], balance < 0 else { return [] }
        return [Finding(check: .balanceRange, expected: "balance ≥ 0 (“may be 0”; a spend the balance cannot pay is refused with 402)",
                        actual: "\(balance)", place: .field(path: "balance", rule: .minimum))]
    }

    /// refreshToken's answer: "a new access token", sent as `Authorization: Bearer <access token>`, so
    /// not empty; a rotated refresh token is traded next, so not empty either; `expires_in` (seconds)
    /// of a new token is above 0. Only the fields' emptiness and the number reach a finding, never a token.
    static func token(_ answer: JSONValue) -> [Finding] {
        guard case let .object(fields) = answer else { return [] }
        var findings: [Finding] = []
        for (name, use) in [("access_token", "sent as “Authorization: Bearer <access token>”"), ("refresh_token", "the rotated refresh token is traded next")] {
            if case let .string(value)? = fields[name], value.trimmingCharacters(in: .whitespaces).isEmpty {
                findings.append(Finding(check: .token, expected: "a non-empty \(name) (\(use))", actual: value.isEmpty ? "an empty string" : "only spaces",
                                        place: .field(path: name, rule: .nonEmpty)))
            }
        }
        if case let .int(seconds)? = fields["expires_in"], seconds < 1 {
            findings.append(Finding(check: .token, expected: "expires_in ≥ 1 (the seconds a new access token lasts)", actual: "\(seconds)",
                                    place: .field(path: "expires_in", rule: .minimum)))
        }
        return findings
    }

    /// "429 and 503 may carry `Retry-After` (seconds)": a count of seconds is not negative. (One that
    /// is neither seconds nor a date is the `retry-after` check's already, on a 429.)
    static func retryAfter(status: Int, headers: HTTPFields) -> [Finding] {
        guard status == 429 || status == 503, let value = headers[.retryAfter]?.trimmingCharacters(in: .whitespaces),
              let seconds = Int(value), seconds < 0 else { return [] }
        return [Finding(check: .retryAfter, expected: "a Retry-After of 0 seconds or more", actual: "“\(value.prefix(20))”", place: .header("Retry-After"))]
    }

    static func stamp(_ date: Date) -> String {
        ISO8601.format(date)
    }

    /// `3 d`, `5 h`, `12 min`, `40 s`.
    static func span(_ seconds: TimeInterval) -> String {
        let s = Int(seconds.rounded())
        if s >= 86_400 { return "\(s / 86_400) d" }
        if s >= 3_600 { return "\(s / 3_600) h" }
        if s >= 60 { return "\(s / 60) min" }
        return "\(s) s"
    }
}

extension JSONCursor {
    /// At an array's `[`: one `T` an element, in list order, moving past the array. Each element starts
    /// as `empty`; for an object, `field` reads each of its keys and values (it does not move the
    /// cursor). On tokens that end too soon it stops with what it made.
    mutating func elements<T>(_ empty: T, _ field: (inout T, JSONCursor, _ key: JSONToken, _ value: JSONToken) -> Void) -> [T] {
        var out: [T] = []
        index += 1  // [
        if current?.kind == .endArray { index += 1; return out }
        while let first = current {
            var element = empty
            if first.kind == .beginObject {
                index += 1
                while let key = current, key.kind == .string {
                    index += 2
                    guard let value = current else { return out }
                    field(&element, self, key, value)
                    guard skipValue() else { return out }
                    guard current?.kind == .comma else { break }
                    index += 1
                }
                index += 1  // }
            } else {
                guard skipValue() else { return out }
            }
            out.append(element)
            guard current?.kind == .comma else { break }
            index += 1
        }
        index += 1  // ]
        return out
    }
}
