import Foundation
import HTTPTypes
import ShopAPI

/// The App Store Server API's reads the ledger needs, one type each: the path and the query it sends.
public enum AppStoreRead: Sendable, Equatable {
    /// Get Transaction History v2: every transaction of the customer who made `transactionID`, one page at a time.
    case history(transactionID: String, revision: String?)
    /// Get Transaction Info.
    case transaction(transactionID: String)
    /// Get Refund History: the customer's revoked transactions, one page at a time.
    case refunds(transactionID: String, revision: String?)

    public var path: String {
        switch self {
        case let .history(id, revision): "/inApps/v2/history/\(id)" + Self.query(revision)
        case let .transaction(id): "/inApps/v1/transactions/\(id)"
        case let .refunds(id, revision): "/inApps/v2/refund/lookup/\(id)" + Self.query(revision)
        }
    }

    /// What it is, for a line that says which read failed.
    public var name: String {
        switch self {
        case .history: "the transaction history"
        case .transaction: "a transaction's record"
        case .refunds: "the refund history"
        }
    }

    static func query(_ revision: String?) -> String {
        guard let revision else { return "" }
        // The revision is opaque: everything but unreserved characters is escaped.
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return "?revision=" + (revision.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
    }

    /// An App Store transaction id: 1 to 20 digits (anything else is never put in a path).
    public static func isTransactionID(_ text: String) -> Bool {
        (1...20).contains(text.count) && text.allSatisfy { $0.isASCII && $0.isNumber }
    }
}

/// Why the App Store could not be read, as facts; `words` says it in one line.
public enum AppStoreFailure: Error, Sendable, Equatable {
    /// No answer: the network layer's fact.
    case transport(TransportError)
    /// 401: the token was refused.
    case unauthorized
    /// An error status, with Apple's `errorCode` and `errorMessage` when its body had them.
    case apple(status: Int, code: Int?, message: String?)
    /// 429 still after the retries allowed, or a `Retry-After` further off than the longest wait.
    case rateLimited(until: Date?)
    /// A 200 whose body is not the answer's shape.
    case unreadable(what: String)
    /// More pages than the bound: the listing is cut there (`AppStoreClient.maxPages`).
    case tooManyPages(Int)

    public var words: String {
        switch self {
        case let .transport(error): "the App Store could not be reached: " + error.words
        case .unauthorized:
            "the App Store refused the token (401): check key_id, issuer_id and bundle_id in the environment's [appstore] table, the key file, and this machine's clock"
        case let .apple(status, code, message):
            "the App Store answered \(status)" + (code.map { " with error \($0)" } ?? "")
                + (message.map { ": \"\(Self.clean($0))\"" } ?? " (no error body)")
        case let .rateLimited(until):
            "the App Store is rate limiting these reads (429)" + (until.map { ", until " + Self.clock($0) } ?? "") + "; try again then"
        case let .unreadable(what): "the App Store's answer for \(what) is not readable"
        case let .tooManyPages(n): "the App Store's listing went past \(n) pages; the ledger stops there"
        }
    }

    /// Apple's own words, kept to one printable line.
    static func clean(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && !(0x80..<0xA0).contains($0.value) }
            .prefix(200).map(Character.init))
    }

    static func clock(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

/// A listing read page by page (history, refunds): each signed transaction checked, in the order sent.
public struct Listing: Sendable, Equatable {
    public var records: [CheckedRecord] = []
    public var pages = 0
    public init(records: [CheckedRecord] = [], pages: Int = 0) {
        self.records = records
        self.pages = pages
    }
}

/// The one client of the App Store Server API: a token on every request (`AppStoreTokens`), every
/// signed transaction checked (`TransactionChecker`) before anything reads it, GETs retried as the
/// shop's reads are (`RetryPolicy`; Apple's `Retry-After` is a UNIX time in milliseconds), and every
/// listing bounded in pages.
public actor AppStoreClient {
    public static let sandboxURL = "https://api.storekit-sandbox.itunes.apple.com"
    public static let productionURL = "https://api.storekit.itunes.apple.com"
    public let baseURL: String
    let tokens: AppStoreTokens
    public let checker: TransactionChecker
    let transport: any HTTPTransport
    let retry: RetryPolicy
    let timeout: Duration
    public let maxPages: Int
    let now: @Sendable () -> Date
    let sleep: @Sendable (Duration) async throws -> Void
    /// Requests sent (each attempt counts).
    public private(set) var requests = 0

    public init(baseURL: String, tokens: AppStoreTokens, checker: TransactionChecker, transport: any HTTPTransport,
                retry: RetryPolicy = RetryPolicy(), timeout: Duration = .seconds(10), maxPages: Int = 500,
                now: @escaping @Sendable () -> Date = { Date() },
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.tokens = tokens
        self.checker = checker
        self.transport = transport
        self.retry = retry
        self.timeout = timeout
        self.maxPages = maxPages
        self.now = now
        self.sleep = sleep
    }

    /// The App Store environment a base URL serves: `Production` for Apple's production host, else `Sandbox`
    /// (the sandbox, and stand-ins of it).
    public static func environment(of baseURL: String) -> String {
        URL(string: baseURL)?.host?.lowercased() == "api.storekit.itunes.apple.com" ? "Production" : "Sandbox"
    }

    /// Every transaction of the customer who made `transactionID`.
    public func history(of transactionID: String) async -> Result<Listing, AppStoreFailure> {
        await listing { .history(transactionID: transactionID, revision: $0) }
    }

    /// The customer's revoked transactions.
    public func refunds(of transactionID: String) async -> Result<Listing, AppStoreFailure> {
        await listing { .refunds(transactionID: transactionID, revision: $0) }
    }

    /// One transaction's record; nil when the App Store does not know it (for this app: error 4040010).
    public func transaction(_ transactionID: String) async -> Result<CheckedRecord?, AppStoreFailure> {
        guard AppStoreRead.isTransactionID(transactionID) else { return .success(nil) }
        switch await send(.transaction(transactionID: transactionID)) {
        case let .failure(.apple(404, code, _)) where code == nil || code == 4_040_010:
            return .success(nil)
        case let .failure(failure):
            return .failure(failure)
        case let .success(body):
            guard let signed = body["signedTransactionInfo"] as? String else { return .failure(.unreadable(what: AppStoreRead.transaction(transactionID: "").name)) }
            let record = await checker.check(signed)
            // The record must be of the transaction asked for: another is believed for nothing here.
            if let t = record.transaction, t.transactionID != transactionID {
                return .success(.notVerified(NotVerified(claimedTransactionID: t.transactionID, reason: .answeredFor(asked: transactionID))))
            }
            return .success(record)
        }
    }

    func listing(_ read: (String?) -> AppStoreRead) async -> Result<Listing, AppStoreFailure> {
        var listing = Listing()
        var revision: String?
        var revisions = Set<String>()
        while true {
            guard listing.pages < maxPages else { return .failure(.tooManyPages(maxPages)) }
            let request = read(revision)
            let body: [String: Any]
            switch await send(request) {
            case let .failure(failure): return .failure(failure)
            case let .success(b): body = b
            }
            guard let signed = body["signedTransactions"] as? [String] else { return .failure(.unreadable(what: request.name)) }
            listing.pages += 1
            for record in signed { listing.records.append(await checker.check(record)) }
            guard body["hasMore"] as? Bool == true else { return .success(listing) }
            // A next page needs a revision never seen: one seen before would read the same pages for ever.
            guard let next = body["revision"] as? String, !next.isEmpty, revisions.insert(next).inserted else { return .failure(.unreadable(what: request.name)) }
            revision = next
        }
    }

    /// One GET, retried as the shop's reads are; the body as a JSON object.
    func send(_ read: AppStoreRead) async -> Result<[String: Any], AppStoreFailure> {
        let started = ContinuousClock.now
        var attempt = 0
        while true {
            attempt += 1
            requests += 1
            var headers = HTTPFields()
            headers.set("Authorization", "Bearer " + (await tokens.token()))
            headers.set("Accept", "application/json")
            let outcome: Result<TransportResponse, TransportError>
            do {
                outcome = .success(try await transport.send(TransportRequest(method: .get, url: baseURL + read.path, headers: headers, timeout: timeout)))
            } catch let error as TransportError {
                outcome = .failure(error)
            } catch {
                return .failure(.transport(.other(detail: "cancelled")))
            }
            var retryAfter: Duration?
            let failure: AppStoreFailure
            switch outcome {
            case let .failure(error):
                failure = .transport(error)
                guard error.isConnectionFailure else { return .failure(failure) }
            case let .success(response):
                if response.status == 200 {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
                        return .failure(.unreadable(what: read.name))
                    }
                    return .success(object)
                }
                let until = Self.retryAfter(response.headers[named: "Retry-After"], now: now())
                failure = response.status == 401 ? .unauthorized
                    : response.status == 429 ? .rateLimited(until: until)
                    : Self.appleError(response)
                guard retry.retryableStatuses.contains(response.status) else { return .failure(failure) }
                // Compared in seconds first: a time centuries away must not overflow on the way to a Duration.
                if let until {
                    let seconds = until.timeIntervalSince(now())
                    guard seconds.isFinite, seconds < 86_400 else { return .failure(failure) }
                    retryAfter = .milliseconds(Int64(max(0, seconds) * 1000))
                }
            }
            let elapsed = ContinuousClock.now - started
            guard let wait = retry.delay(afterAttempt: attempt, retryAfter: retryAfter, elapsed: elapsed, random: Double.random(in: 0..<1)) else {
                return .failure(failure)
            }
            do { try await sleep(wait) } catch { return .failure(failure) }
        }
    }

    /// Apple's `Retry-After`: a UNIX time in milliseconds (a small number is read as seconds from now,
    /// as HTTP has it, so a server that sends seconds is not waited on for 50 years).
    static func retryAfter(_ value: String?, now: Date) -> Date? {
        guard let value, let number = Double(value.trimmingCharacters(in: .whitespaces)), number.isFinite, number >= 0 else { return nil }
        return number > 1e11 ? Date(timeIntervalSince1970: number / 1000) : now + number
    }

    static func appleError(_ response: TransportResponse) -> AppStoreFailure {
        let body = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return .apple(status: response.status, code: (body?["errorCode"] as? NSNumber)?.intValue, message: body?["errorMessage"] as? String)
    }
}
