import Foundation
import Hummingbird
import StubCore

/// How the stand-in reads a request body (`request.decode(as:context:)`): at most 1 MiB (else 413), then
/// `JSONDecoder`; a body that is not JSON, or not the JSON object a route expects, is a 400 `invalid_json`.
/// The types below check their own fields and throw the contract's 400 with a plain message.
public struct StubBody: RequestDecoder {
    static let limit = 1 << 20

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: Self.limit)
        } catch {
            throw ShopError(status: 413, code: "body_too_large", message: "request body over 1 MiB")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as ShopError {
            throw error
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            // Valid JSON of another shape: an array, a string … where an object was expected.
            throw ShopError.badRequest("request body must be a JSON object", code: "invalid_json")
        } catch DecodingError.valueNotFound(_, let context) where context.codingPath.isEmpty {
            throw ShopError.badRequest("request body must be a JSON object", code: "invalid_json")  // null
        } catch {
            throw ShopError.badRequest("request body is not valid JSON", code: "invalid_json")
        }
    }
}

/// `purchaseCheer`'s body.
struct PurchaseBody: Decodable {
    let identifier: String
    /// What `transaction_id` was: an unsigned 64-bit number, or (kept for the lenient faults, which
    /// take them; refused otherwise) a negative number or a string.
    enum Transaction: Equatable {
        case number(UInt64), negative(Int64), text(String)
    }
    let transaction: Transaction

    enum CodingKeys: String, CodingKey {
        case identifier, transactionID = "transaction_id"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let identifier = try? c.decode(String.self, forKey: .identifier) else {
            throw ShopError.badRequest("identifier is required (a cheer bundle such as com.reiterate.cheer.200)")
        }
        guard c.contains(.transactionID) else {
            throw ShopError.badRequest("transaction_id is required (an unsigned 64-bit integer)")
        }
        let whole = try? c.decode(WholeNumber.self, forKey: .transactionID)
        if let number = whole?.uint64 {
            transaction = .number(number)
        } else if let negative = whole?.int64, negative < 0 {
            transaction = .negative(negative)
        } else if let text = try? c.decode(String.self, forKey: .transactionID) {
            transaction = .text(text)
        } else {
            throw Self.notUnsigned
        }
        self.identifier = identifier
    }

    static let notUnsigned = ShopError.badRequest("transaction_id must be an unsigned 64-bit integer")
}

/// `spendCheer`'s body.
struct SpendBody: Decodable {
    let amount: Int
    let product: String
    let comment: String?

    enum CodingKeys: String, CodingKey { case amount, product, comment }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard c.contains(.amount) else { throw ShopError.badRequest("amount is required", code: "invalid_amount") }
        guard let amount = (try? c.decode(WholeNumber.self, forKey: .amount))?.int else {
            throw ShopError.badRequest("amount must be a whole number of 1 or more", code: "invalid_amount")
        }
        guard let product = try? c.decode(String.self, forKey: .product) else {
            throw ShopError.badRequest("product is required (an Audio Pack identifier)")
        }
        if try !c.contains(.comment) || c.decodeNil(forKey: .comment) {
            comment = nil
        } else if let text = try? c.decode(String.self, forKey: .comment) {
            comment = text
        } else {
            throw ShopError.badRequest("comment must be text")
        }
        self.amount = amount
        self.product = product
    }
}

/// `refreshToken`'s body.
struct RefreshBody: Decodable {
    let refreshToken: String

    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let token = try? c.decode(String.self, forKey: .refreshToken) else {
            throw ShopError.badRequest("refresh_token is required")
        }
        refreshToken = token
    }
}

/// A JSON number read as an integer when it holds one exactly: `5`, `5.0` and `5e0` are 5; `5.5`, `-1`
/// (for an unsigned field), `true` and `"5"` are not numbers of the field's kind.
struct WholeNumber: Decodable {
    let int64: Int64?
    let uint64Value: UInt64?
    let double: Double?

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let v = try? c.decode(Int64.self) {
            (int64, uint64Value, double) = (v, nil, nil)
        } else if let v = try? c.decode(UInt64.self) {
            (int64, uint64Value, double) = (nil, v, nil)
        } else {
            (int64, uint64Value, double) = (nil, nil, try c.decode(Double.self))
        }
    }

    var int: Int? {
        if let int64 { return Int(exactly: int64) }
        if let uint64Value { return Int(exactly: uint64Value) }
        return double.flatMap { Int(exactly: $0) }
    }

    var uint64: UInt64? {
        if let int64 { return UInt64(exactly: int64) }
        if let uint64Value { return uint64Value }
        return double.flatMap { UInt64(exactly: $0) }
    }
}
