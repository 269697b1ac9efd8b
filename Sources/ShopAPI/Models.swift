import Foundation

// Response models for every schema of the contract (components/schemas). Decoding is lenient where the
// contract asks: unknown keys ignored, optional fields optional, dates with or without fractions and
// offsets, and one unreadable entry never fails a whole list. Encoding (for `--json`) uses snake_case.

/// `Balance`: cheer units; may be 0.
public struct CheerBalance: Codable, Sendable, Equatable {
    public var balance: Int
    public init(balance: Int) { self.balance = balance }
}

public struct AudioPack: Codable, Sendable, Equatable, Identifiable {
    public var identifier: String
    public var name: String
    public var creator: String?
    public var description: String?
    public var priceCents: Int?
    public var currency: String?
    public var sampleCount: Int?
    public var durationSeconds: Int?
    public var cheerTotal: Int?
    public var released: Date?
    public var tags: [String]?

    public var id: String { identifier }

    public init(
        identifier: String, name: String, creator: String? = nil, description: String? = nil, priceCents: Int? = nil,
        currency: String? = nil, sampleCount: Int? = nil, durationSeconds: Int? = nil, cheerTotal: Int? = nil,
        released: Date? = nil, tags: [String]? = nil
    ) {
        self.identifier = identifier
        self.name = name
        self.creator = creator
        self.description = description
        self.priceCents = priceCents
        self.currency = currency
        self.sampleCount = sampleCount
        self.durationSeconds = durationSeconds
        self.cheerTotal = cheerTotal
        self.released = released
        self.tags = tags
    }

    enum CodingKeys: String, CodingKey {
        case identifier, name, creator, description, currency, released, tags
        case priceCents = "price_cents", sampleCount = "sample_count", durationSeconds = "duration_seconds"
        case cheerTotal = "cheer_total"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try c.decode(String.self, forKey: .identifier)
        name = try c.decode(String.self, forKey: .name)
        creator = try c.decodeIfPresent(String.self, forKey: .creator)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        priceCents = try c.decodeIfPresent(Int.self, forKey: .priceCents)
        currency = try c.decodeIfPresent(String.self, forKey: .currency)
        sampleCount = try c.decodeIfPresent(Int.self, forKey: .sampleCount)
        durationSeconds = try c.decodeIfPresent(Int.self, forKey: .durationSeconds)
        cheerTotal = try c.decodeIfPresent(Int.self, forKey: .cheerTotal)
        released = try c.decodeDateIfPresent(forKey: .released)
        tags = try c.decodeIfPresent([String].self, forKey: .tags)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(identifier, forKey: .identifier)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(creator, forKey: .creator)
        try c.encodeIfPresent(description, forKey: .description)
        try c.encodeIfPresent(priceCents, forKey: .priceCents)
        try c.encodeIfPresent(currency, forKey: .currency)
        try c.encodeIfPresent(sampleCount, forKey: .sampleCount)
        try c.encodeIfPresent(durationSeconds, forKey: .durationSeconds)
        try c.encodeIfPresent(cheerTotal, forKey: .cheerTotal)
        try c.encodeIfPresent(released.map(ISO8601.format), forKey: .released)
        try c.encodeIfPresent(tags, forKey: .tags)
    }
}

/// An entry of a list that could not be read: where it stood, its id if that much was readable, and why.
public struct UnreadableEntry: Codable, Sendable, Equatable {
    public var index: Int
    public var id: String?
    public var reason: String

    public init(index: Int, id: String?, reason: String) {
        self.index = index
        self.id = id
        self.reason = reason
    }
}

/// The shop's packs, in shop order; packs that could not be read are listed apart.
public struct AudioPackList: Codable, Sendable, Equatable {
    public var packs: [AudioPack]
    public var unreadable: [UnreadableEntry]

    public init(packs: [AudioPack], unreadable: [UnreadableEntry] = []) {
        self.packs = packs
        self.unreadable = unreadable
    }

    enum CodingKeys: String, CodingKey { case packs, unreadable }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let items = try c.decode([Lossy<AudioPack>].self, forKey: .packs)
        packs = []
        unreadable = []
        for (index, item) in items.enumerated() {
            switch item.result {
            case let .success(pack): packs.append(pack)
            case let .failure(failure): unreadable.append(UnreadableEntry(index: index, id: failure.id, reason: failure.reason))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(packs, forKey: .packs)
        if !unreadable.isEmpty { try c.encode(unreadable, forKey: .unreadable) }
    }
}

/// `CheerComment`: both fields may be null.
public struct CheerComment: Codable, Sendable, Equatable {
    public var signature: String?
    public var body: String?

    public init(signature: String?, body: String?) {
        self.signature = signature
        self.body = body
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(signature, forKey: .signature)
        try c.encode(body, forKey: .body)
    }

    enum CodingKeys: String, CodingKey { case signature, body }
}

/// `CheerHistoryEntry`.
public struct CheerHistoryEntry: Codable, Sendable, Equatable {
    public var id: String?
    public var creator: String
    public var amount: Int
    public var product: String
    public var date: Date
    /// `nil` when the server sent `null` or nothing.
    public var comments: [CheerComment]?

    public init(id: String?, creator: String, amount: Int, product: String, date: Date, comments: [CheerComment]?) {
        self.id = id
        self.creator = creator
        self.amount = amount
        self.product = product
        self.date = date
        self.comments = comments
    }

    enum CodingKeys: String, CodingKey { case id, creator, amount, product, date, comments }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        creator = try c.decode(String.self, forKey: .creator)
        amount = try c.decode(Int.self, forKey: .amount)
        product = try c.decode(String.self, forKey: .product)
        guard let date = try c.decodeDateIfPresent(forKey: .date) else {
            throw DecodingError.keyNotFound(CodingKeys.date, .init(codingPath: c.codingPath, debugDescription: "date is required"))
        }
        self.date = date
        comments = try c.decodeIfPresent([CheerComment].self, forKey: .comments)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(id, forKey: .id)
        try c.encode(creator, forKey: .creator)
        try c.encode(amount, forKey: .amount)
        try c.encode(product, forKey: .product)
        try c.encode(ISO8601.format(date), forKey: .date)
        try c.encode(comments, forKey: .comments)
    }
}

/// One row of a history page: an entry, or an entry that could not be read (kept in its place).
public enum HistoryItem: Sendable, Equatable {
    case entry(CheerHistoryEntry)
    case unreadable(UnreadableEntry)
}

/// One page of `getCheerHistory`. Older servers send no paging fields: then the page is the whole history.
public struct CheerHistoryPage: Sendable, Equatable {
    public var items: [HistoryItem]
    public var page: Int
    public var perPage: Int
    public var totalPages: Int
    public var totalCount: Int
    /// The answer's `X-Request-Id`, when the page came from the server through a call that keeps it
    /// (not part of the page's JSON: a cached page has none).
    public var requestID: String?

    public init(items: [HistoryItem], page: Int, perPage: Int, totalPages: Int, totalCount: Int) {
        self.items = items
        self.page = page
        self.perPage = perPage
        self.totalPages = totalPages
        self.totalCount = totalCount
    }

    public var entries: [CheerHistoryEntry] {
        items.compactMap { if case let .entry(e) = $0 { return e } else { return nil } }
    }
}

extension CheerHistoryPage: Codable {
    enum CodingKeys: String, CodingKey {
        case history, page
        case perPage = "per_page", totalPages = "total_pages", totalCount = "total_count"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let rows = try c.decode([Row].self, forKey: .history)
        items = rows.enumerated().map { index, row in
            if let kept = row.keptUnreadable { return .unreadable(kept) }
            switch row.entry.result {
            case let .success(entry): return .entry(entry)
            case let .failure(failure): return .unreadable(UnreadableEntry(index: index, id: failure.id, reason: failure.reason))
            }
        }
        let page = try c.decodeIfPresent(Int.self, forKey: .page)
        let perPage = try c.decodeIfPresent(Int.self, forKey: .perPage)
        let totalPages = try c.decodeIfPresent(Int.self, forKey: .totalPages)
        let totalCount = try c.decodeIfPresent(Int.self, forKey: .totalCount)
        if let page, let perPage, let totalPages, let totalCount {
            self.page = page
            self.perPage = perPage
            self.totalPages = totalPages
            self.totalCount = totalCount
        } else {
            // A server without paging: everything on one page.
            self.page = 1
            self.perPage = max(items.count, 1)
            self.totalPages = items.isEmpty ? 0 : 1
            self.totalCount = items.count
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var history = c.nestedUnkeyedContainer(forKey: .history)
        for item in items {
            switch item {
            case let .entry(entry): try history.encode(entry)
            case let .unreadable(u): try history.encode(UnreadableRow(unreadable: true, index: u.index, id: u.id, reason: u.reason))
            }
        }
        try c.encode(page, forKey: .page)
        try c.encode(perPage, forKey: .perPage)
        try c.encode(totalPages, forKey: .totalPages)
        try c.encode(totalCount, forKey: .totalCount)
    }

    struct UnreadableRow: Codable {
        var unreadable: Bool
        var index: Int
        var id: String?
        var reason: String
    }

    /// A row as read back: an entry, or (from our own `encode`, e.g. the cache) a marked unreadable one.
    struct Row: Decodable {
        var entry: Lossy<CheerHistoryEntry>
        var keptUnreadable: UnreadableEntry?

        private enum MarkKey: String, CodingKey { case unreadable }

        init(from decoder: any Decoder) throws {
            // Only our own cache writes the mark; a server's row is not decoded twice for it.
            if let marked = try? decoder.container(keyedBy: MarkKey.self), marked.contains(.unreadable),
               let row = try? UnreadableRow(from: decoder), row.unreadable {
                keptUnreadable = UnreadableEntry(index: row.index, id: row.id, reason: row.reason)
            }
            entry = try Lossy<CheerHistoryEntry>(from: decoder)
        }
    }
}

/// `auth/refresh`'s answer.
public struct TokenGrant: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String?
    public var expiresIn: Int?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", refreshToken = "refresh_token", expiresIn = "expires_in"
    }
}
