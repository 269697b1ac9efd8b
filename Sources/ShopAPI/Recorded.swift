import Foundation
import JSONTokens

/// A read kept as the server sent it (`ShopClient.sendRecorded`), for snapshots, pins and comparisons.
public struct Recorded<Value: Sendable>: Sendable {
    public var value: Value
    public var document: JSONValue?
    public var requestID: String?
    public var status: Int
    public var method: String
    /// Path and query.
    public var target: String
    public var at: Date
}
