import Foundation
import Hummingbird
import StubCore

/// How the stand-in reads a request body (`request.decode(as:context:)`): at most 1 MiB (else 413), then
/// `JSONDecoder`; a body that is not JSON, or not the JSON object a route expects, is a 400 `invalid_json`.
/// The types below check their own fields and throw the contract's 400 with a plain message.
public struct StubBody: RequestDecoder {
    static let limit = 1 << 20
    /// Where the body types find the malformed body a `lenient_body` fault lets through.
    static let lenientKey = CodingUserInfoKey(rawValue: "lenient_body")
    /// The malformed body this request may carry and still be taken (a `lenient_body` fault).
    var lenient: LenientBody?

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: Self.limit)
        } catch {
            throw ShopError(status: 413, code: "body_too_large", message: "request body over 1 MiB")
        }
        let decoder = JSONDecoder()
        if let lenient, let key = Self.lenientKey { decoder.userInfo[key] = lenient }
        do {
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
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
    /// take them; refused otherwise) a negative number or a string; under `lenient_body` also a number
    /// with a fraction, or none.
    enum Transaction: Equatable {
        case number(UInt64), negative(Int64), text(String), fraction(Double), missing
    }
    let transaction: Transaction
    /// The malformed body taken under `lenient_body` (nil: the body was well formed, or refused).
    let bent: LenientBody?

    enum CodingKeys: String, CodingKey {
        case identifier, transactionID = "transaction_id"
    }

    init(from decoder: any Decoder) throws {
        let lenient = StubBody.lenientKey.flatMap { decoder.userInfo[$0] as? LenientBody }
        var bent: LenientBody?
        let c: KeyedDecodingContainer<CodingKeys>
        do {
            c = try decoder.container(keyedBy: CodingKeys.self)
        } catch {
            // JSON that is not an object: refused, or credited as a bundle of 50, a new transaction.
            guard lenient == .purchaseBodyNotObject, (try? decoder.singleValueContainer().decodeNil()) == false else { throw error }
            (identifier, transaction, self.bent) = ("com.reiterate.cheer.50", .missing, .purchaseBodyNotObject)
            return
        }
        if let identifier = try? c.decode(String.self, forKey: .identifier) {
            self.identifier = identifier
        } else if lenient == .identifierMissing, !c.contains(.identifier) {
            identifier = "com.reiterate.cheer.50"
            bent = .identifierMissing
        } else if lenient == .identifierNotText, c.contains(.identifier) {
            identifier = "com.reiterate.cheer.50"
            bent = .identifierNotText
        } else {
            throw ShopError.badRequest("identifier is required (a cheer bundle such as com.reiterate.cheer.200)")
        }
        guard c.contains(.transactionID) else {
            guard lenient == .transactionMissing else { throw ShopError.badRequest("transaction_id is required (an unsigned 64-bit integer)") }
            transaction = .missing
            self.bent = .transactionMissing
            return
        }
        let whole = try? c.decode(WholeNumber.self, forKey: .transactionID)
        if let number = whole?.uint64 {
            transaction = .number(number)
        } else if let negative = whole?.int64, negative < 0 {
            transaction = .negative(negative)
        } else if let text = try? c.decode(String.self, forKey: .transactionID) {
            transaction = .text(text)
        } else if lenient == .transactionFraction, let fraction = whole?.double, fraction.isFinite {
            transaction = .fraction(fraction)
            bent = .transactionFraction
        } else {
            throw Self.notUnsigned
        }
        self.bent = bent
    }

    static let notUnsigned = ShopError.badRequest("transaction_id must be an unsigned 64-bit integer")
}

/// `spendCheer`'s body.
struct SpendBody: Decodable {
    let amount: Int
    let product: String
    let comment: String?
    /// The malformed body taken under `lenient_body` (nil: the body was well formed, or refused). A
    /// product it fills in (`""`, or a number's digits) is not in the pack list.
    let bent: LenientBody?

    enum CodingKeys: String, CodingKey { case amount, product, comment }

    init(from decoder: any Decoder) throws {
        let lenient = StubBody.lenientKey.flatMap { decoder.userInfo[$0] as? LenientBody }
        let c: KeyedDecodingContainer<CodingKeys>
        do {
            c = try decoder.container(keyedBy: CodingKeys.self)
        } catch {
            // JSON that is not an object: refused, or taken as a spend of 1 on no pack.
            guard lenient == .bodyNotObject, (try? decoder.singleValueContainer().decodeNil()) == false else { throw error }
            (amount, product, comment, bent) = (1, "", nil, .bodyNotObject)
            return
        }
        var bent: LenientBody?
        let whole = try? c.decode(WholeNumber.self, forKey: .amount)
        if let amount = whole?.int {
            self.amount = amount
        } else if !c.contains(.amount) {
            guard lenient == .amountMissing else { throw ShopError.badRequest("amount is required", code: "invalid_amount") }
            amount = 1
            bent = .amountMissing
        } else if lenient == .amountFraction, let fraction = whole?.double, let down = Int(exactly: fraction.rounded(.towardZero)) {
            amount = down
            bent = .amountFraction
        } else if lenient == .amountAsText, let text = try? c.decode(String.self, forKey: .amount), let number = Int(text) {
            amount = number
            bent = .amountAsText
        } else {
            throw ShopError.badRequest("amount must be a whole number of 1 or more", code: "invalid_amount")
        }
        if let product = try? c.decode(String.self, forKey: .product) {
            self.product = product
        } else if lenient == .productMissing, !c.contains(.product) {
            product = ""
            bent = .productMissing
        } else if lenient == .productNotText, let text = Self.text(of: c, .product) {
            product = text
            bent = .productNotText
        } else {
            throw ShopError.badRequest("product is required (an Audio Pack identifier)")
        }
        if try !c.contains(.comment) || c.decodeNil(forKey: .comment) {
            comment = nil
        } else if let text = try? c.decode(String.self, forKey: .comment) {
            comment = text
        } else if lenient == .commentNotText, let text = Self.text(of: c, .comment) {
            comment = text
            bent = .commentNotText
        } else {
            throw ShopError.badRequest("comment must be text")
        }
        self.bent = bent
    }

    /// A number or a boolean where text belongs, as its JSON text (`42`, `1.5`, `true`); nil for
    /// anything else (an object, an array).
    static func text(of c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) -> String? {
        if let n = try? c.decode(Int64.self, forKey: key) { return String(n) }
        if let d = try? c.decode(Double.self, forKey: key) { return String(d) }
        if let b = try? c.decode(Bool.self, forKey: key) { return String(b) }
        return nil
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
