import Foundation
import ShopAPI

// A case as a replay file holds it, in words a person reads and edits: an amount is a number or `whole-balance`,
// `balance+1`, `half+1`; a write is `{"spend": 1, "comment": "…"}` or `{"purchase": "smallest"}`; a step is a list
// of writes sent at once; a plan is `{"writes": [[…], […]]}`, `{"read": "getCheerHistory", "query": {"per_page": "200"}}`,
// `{"auth": "getBalance", "token": "no token"}`, `{"text": "comment", "value": "…"}` or `{"identity": "unique-ids"}`.

struct ExploreCodingError: Error {}

extension ExploreAmount: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) { self = .literal(n); return }
        switch try c.decode(String.self) {
        case "whole-balance": self = .wholeBalance
        case "balance+1": self = .balancePlusOne
        case "half+1": self = .halfPlusOne
        default: throw ExploreCodingError()
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case let .literal(n): try c.encode(n)
        case .wholeBalance: try c.encode("whole-balance")
        case .balancePlusOne: try c.encode("balance+1")
        case .halfPlusOne: try c.encode("half+1")
        }
    }
}

extension ExploreWrite: Codable {
    enum Keys: String, CodingKey { case spend, comment, purchase, slot, wide }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        if let amount = try c.decodeIfPresent(ExploreAmount.self, forKey: .spend) {
            self = .spend(amount, comment: try c.decodeIfPresent(String.self, forKey: .comment))
        } else {
            self = .purchase(try c.decode(ExploreBundle.self, forKey: .purchase), slot: try c.decodeIfPresent(Int.self, forKey: .slot) ?? 0,
                             wide: try c.decodeIfPresent(Bool.self, forKey: .wide) ?? false)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case let .spend(amount, comment):
            try c.encode(amount, forKey: .spend)
            try c.encodeIfPresent(comment, forKey: .comment)
        case let .purchase(bundle, slot, wide):
            try c.encode(bundle, forKey: .purchase)
            if slot != 0 { try c.encode(slot, forKey: .slot) }
            if wide { try c.encode(wide, forKey: .wide) }
        }
    }
}

extension ExploreStep: Codable {
    public init(from decoder: any Decoder) throws { writes = try decoder.singleValueContainer().decode([ExploreWrite].self) }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(writes)
    }
}

extension ExploreQueryValue: Codable {
    enum Keys: String, CodingKey { case `is` }

    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) { self = .literal(text); return }
        switch try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .is) {
        case "the user": self = .user
        case "the page after the last": self = .pastLastPage
        default: throw ExploreCodingError()
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case let .literal(text):
            var c = encoder.singleValueContainer()
            try c.encode(text)
        case .user:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode("the user", forKey: .is)
        case .pastLastPage:
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode("the page after the last", forKey: .is)
        }
    }
}

extension ExplorePlan: Codable {
    enum Keys: String, CodingKey { case read, query, auth, token, writes, text, value, identity }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        if let op = try c.decodeIfPresent(OperationID.self, forKey: .read) {
            self = .read(op, query: try c.decodeIfPresent([String: ExploreQueryValue].self, forKey: .query) ?? [:])
        } else if let op = try c.decodeIfPresent(OperationID.self, forKey: .auth) {
            self = .auth(op, try c.decode(ExploreAuth.self, forKey: .token))
        } else if let steps = try c.decodeIfPresent([ExploreStep].self, forKey: .writes) {
            self = .writes(steps)
        } else if let field = try c.decodeIfPresent(String.self, forKey: .text) {
            self = .roundTrip(field: field, text: try c.decode(String.self, forKey: .value))
        } else {
            self = .identity(try c.decode(ExploreIdentity.self, forKey: .identity))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case let .read(op, query):
            try c.encode(op, forKey: .read)
            try c.encode(query, forKey: .query)
        case let .auth(op, variant):
            try c.encode(op, forKey: .auth)
            try c.encode(variant, forKey: .token)
        case let .writes(steps): try c.encode(steps, forKey: .writes)
        case let .roundTrip(field, text):
            try c.encode(field, forKey: .text)
            try c.encode(text, forKey: .value)
        case let .identity(check): try c.encode(check, forKey: .identity)
        }
    }
}
