/// The contract's schemas as the stand-in holds them (`../shared/api/reiterate-api.yaml`, components/schemas).

public struct AudioPack: Sendable, Equatable {
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

    public var json: JSON {
        .object([
            ("identifier", .string(identifier)),
            ("name", .string(name)),
            ("creator", .string(creator)),
            ("description", .string(description)),
            ("price_cents", .int(priceCents)),
            ("currency", .string(currency)),
            ("sample_count", .int(sampleCount)),
            ("duration_seconds", .int(durationSeconds)),
            ("cheer_total", .int(cheerTotal)),
            ("released", .string(ISODate.format(epochSeconds: released))),
            ("tags", .array(tags.map(JSON.string))),
        ])
    }
}

public struct CheerComment: Sendable, Equatable {
    public var signature: String?
    public var body: String?

    public init(signature: String?, body: String?) {
        self.signature = signature
        self.body = body
    }

    public var json: JSON {
        .object([
            ("signature", signature.map(JSON.string) ?? .null),
            ("body", body.map(JSON.string) ?? .null),
        ])
    }
}

public struct CheerHistoryEntry: Sendable, Equatable {
    public var id: String
    public var creator: String
    public var amount: Int
    public var product: String
    public var date: Int64
    /// Some servers send fractional seconds; the contract allows both forms.
    public var dateMillis: Int?
    /// `nil` is sent as `"comments": null`, which the contract allows.
    public var comments: [CheerComment]?

    public var json: JSON {
        .object([
            ("id", .string(id)),
            ("creator", .string(creator)),
            ("amount", .int(amount)),
            ("product", .string(product)),
            ("date", .string(ISODate.format(epochSeconds: date, millis: dateMillis))),
            ("comments", comments.map { .array($0.map(\.json)) } ?? .null),
        ])
    }
}

/// One page of a user's history, with the contract's paging fields.
public struct HistoryPage: Sendable, Equatable {
    public var entries: [CheerHistoryEntry]
    public var paging: Paging

    public var json: JSON {
        .object([
            ("history", .array(entries.map(\.json))),
            ("page", .int(paging.page)),
            ("per_page", .int(paging.perPage)),
            ("total_pages", .int(paging.totalPages)),
            ("total_count", .int(paging.totalCount)),
        ])
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
public struct ShopError: Error, Sendable, Equatable {
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

    public var json: JSON { .object([("message", .string(message)), ("code", .string(code))]) }

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
