import Foundation
import JSONTokens

/// A read kept as the server sent it (`ShopClient.sendRecorded`), for snapshots, pins and comparisons.
public struct Recorded<Value: Sendable>: Sendable {
    public var value: Value
    public var document: JSONValue?
    public var requestID: String?
    public var status: Int
    /// The request the read was (method, path and query).
    public var request: RequestKey
    public var at: Date

    /// `GET`.
    public var method: String { request.method.rawValue }
    /// Path and query, as sent.
    public var target: String { request.target }
}
