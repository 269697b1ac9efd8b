/// The contract's schemas as the stand-in holds them (`../shared/api/reiterate-api.yaml`, components/schemas).
/// Each is `Encodable` with the contract's snake_case keys; the server encodes them with `StubJSON.encoder`.

public struct AudioPack: Sendable, Equatable, Encodable {
    public var identifier: String
    public var name: String
    public var creator: String
    public var description: String
    public var priceCents: Int
    public var currency: String
    public var sampleCount: Int
    public var durationSeconds: Int
    public var cheerTotal: Int
    public var released: Int64
    public var tags: [String]

    enum CodingKeys: String, CodingKey {
        case identifier, name, creator, description, currency, released, tags
        case priceCents = "price_cents", sampleCount = "sample_count", durationSeconds = "duration_seconds"
        case cheerTotal = "cheer_total"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(identifier, forKey: .identifier)
        try c.encode(name, forKey: .name)
        try c.encode(creator, forKey: .creator)
        try c.encode(description, forKey: .description)
        try c.encode(priceCents, forKey: .priceCents)
        try c.encode(currency, forKey: .currency)
        try c.encode(sampleCount, forKey: .sampleCount)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(cheerTotal, forKey: .cheerTotal)
        try c.encode(ISODate.format(epochSeconds: released), forKey: .released)
        try c.encode(tags, forKey: .tags)
    }
}

public struct CheerComment: Sendable, Equatable, Encodable {
    public var signature: String?
    public var body: String?

    public init(signature: String?, body: String?) {
        self.signature = signature
        self.body = body
    }

    enum CodingKeys: String, CodingKey { case signature, body }

    /// Absent parts travel as `null` (the contract's nullable fields), not as missing keys.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(signature, forKey: .signature)
        try c.encode(body, forKey: .body)
    }
}

public struct CheerHistoryEntry: Sendable, Equatable, Encodable {
    public var id: String
    public var creator: String
    public var amount: Int
    public var product: String
    public var date: Int64
    /// Some servers send fractional seconds; the contract allows both forms.
    public var dateMillis: Int?
    /// `nil` is sent as `"comments": null`, which the contract allows.
    public var comments: [CheerComment]?

    enum CodingKeys: String, CodingKey { case id, creator, amount, product, date, comments }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(creator, forKey: .creator)
        try c.encode(amount, forKey: .amount)
        try c.encode(product, forKey: .product)
        try c.encode(ISODate.format(epochSeconds: date, millis: dateMillis), forKey: .date)
        try c.encode(comments, forKey: .comments)  // `nil` is sent as null
    }
}

/// One page of a user's history, with the contract's paging fields.
public struct HistoryPage: Sendable, Equatable, Encodable {
    public var entries: [CheerHistoryEntry]
    public var paging: Paging
    /// The entry at this index goes on the wire as `HostileText.MalformedEntry` (the `malformed_entry` fault).
    public var malformedIndex: Int?
    /// Added to `total_pages` on the wire (the `bad_paging` fault).
    public var totalPagesError = 0
    /// The `total_count` said on the wire instead of the real one, `total_pages` following it (the
    /// `drifting_total` and `hidden_page` faults); the entries stay those of the real count.
    public var saidTotalCount: Int?

    public init(entries: [CheerHistoryEntry], paging: Paging, malformedIndex: Int? = nil) {
        self.entries = entries
        self.paging = paging
        self.malformedIndex = malformedIndex
    }

    /// Keeps only the first `cap` entries, the paging fields as they were (the `short_pages` fault: a page
    /// shorter than its `per_page` though more entries follow). False when it held no more than `cap`.
    public mutating func cut(to cap: Int) -> Bool {
        guard entries.count > cap else { return false }
        entries.removeLast(entries.count - max(cap, 0))
        if let malformedIndex, malformedIndex >= entries.count { self.malformedIndex = nil }
        return true
    }

    enum CodingKeys: String, CodingKey {
        case history, page
        case perPage = "per_page", totalPages = "total_pages", totalCount = "total_count"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var history = c.nestedUnkeyedContainer(forKey: .history)
        for (index, entry) in entries.enumerated() {
            if index == malformedIndex {
                try history.encode(HostileText.MalformedEntry(id: entry.id))
            } else {
                try history.encode(entry)
            }
        }
        try c.encode(paging.page, forKey: .page)
        try c.encode(paging.perPage, forKey: .perPage)
        let said = saidTotalCount.map { Paging(page: paging.page, perPage: paging.perPage, totalCount: $0) } ?? paging
        try c.encode(said.totalPages + totalPagesError, forKey: .totalPages)
        try c.encode(said.totalCount, forKey: .totalCount)
    }
}

/// Paging arithmetic of `getCheerHistory`: 1-based pages, `per_page` in 1...200, and a page past the
/// end is an empty page rather than an error.
public struct Paging: Sendable, Equatable {
    public static let defaultPerPage = 50
    public static let maxPerPage = 200

    public let page: Int
    public let perPage: Int
    public let totalCount: Int

    public init(page: Int, perPage: Int, totalCount: Int) {
        self.page = page
        self.perPage = perPage
        self.totalCount = totalCount
    }

    public var totalPages: Int { totalCount / perPage + (totalCount % perPage == 0 ? 0 : 1) }

    /// The indexes (0 = newest) of the entries on this page; empty past the end.
    public var range: Range<Int> {
        let start = (page - 1).multipliedReportingOverflow(by: perPage)
        guard !start.overflow, start.partialValue < totalCount else { return totalCount..<totalCount }
        return start.partialValue..<min(start.partialValue + perPage, totalCount)
    }
}

/// An API error as the contract shapes it: a status, a JSON body `{message, code}`, maybe `Retry-After`.
public struct ShopError: Error, Sendable, Equatable, Encodable {
    public var status: Int
    public var code: String
    public var message: String
    public var retryAfter: Int?

    public init(status: Int, code: String, message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    enum CodingKeys: String, CodingKey { case message, code }

    /// The body: `{"code": …, "message": …}` (status and `Retry-After` travel in the head).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(message, forKey: .message)
        try c.encode(code, forKey: .code)
    }

    public static func badRequest(_ message: String, code: String = "invalid_request") -> ShopError {
        ShopError(status: 400, code: code, message: message)
    }

    public static func unauthorized(_ message: String, code: String = "unauthorized") -> ShopError {
        ShopError(status: 401, code: code, message: message)
    }

    public static func unknownUser(_ user: String) -> ShopError {
        ShopError(status: 404, code: "unknown_user", message: "unknown user '\(user)'")
    }
}
