import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the App Store Connect API key cannot be used. Its words name the file, never its contents.
public enum AppStoreKeyError: Error, Sendable, Equatable {
    case unreadable(path: String)
    /// Open to group or others: refused, as the proxy CA's key is.
    case tooOpen(path: String, mode: UInt16)
    /// Not a P-256 private key in PEM (an App Store Connect `.p8` is PKCS#8).
    case notAKey(path: String)

    /// One line naming the setting (`key_file`), not the path: a path may say more than the line needs.
    public var words: String {
        switch self {
        case .unreadable: "the App Store key file (key_file) cannot be read"
        case let .tooOpen(_, mode):
            "the App Store key file (key_file) is open to other users (mode \(String(mode, radix: 8))), so it is not used: make it private to you (chmod 600)"
        case .notAKey: "the App Store key file (key_file) is not an App Store Connect API key (.p8, a P-256 private key)"
        }
    }
}

/// An App Store Connect API key (`.p8`) with the ids the App Store Server API asks for. Its text never
/// leaves this value: it has no description that shows it.
public struct AppStoreKey: Sendable, CustomStringConvertible {
    public let keyID: String
    public let issuerID: String
    public let bundleID: String
    let key: P256.Signing.PrivateKey

    public init(keyID: String, issuerID: String, bundleID: String, key: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.key = key
    }

    /// Reads the key from `path`, refused unless the file is private to its owner.
    public static func load(path: String, keyID: String, issuerID: String, bundleID: String) throws(AppStoreKeyError) -> AppStoreKey {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .unreadable(path: path) }
        let mode = UInt16(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw .tooOpen(path: path, mode: mode) }
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
        guard let pem = String(data: data, encoding: .utf8), let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw .notAKey(path: path)
        }
        return AppStoreKey(keyID: keyID, issuerID: issuerID, bundleID: bundleID, key: key)
    }

    public var description: String { "App Store key \(keyID) (issuer \(issuerID), bundle \(bundleID))" }
}

/// The bearer tokens of the App Store Server API: a JWT signed ES256 with the key, header `kid`, payload
/// `iss`, `iat`, `exp` (`lifetime` after `iat`, 5 minutes at most), `aud: appstoreconnect-v1` and `bid`.
/// One token serves every request until `renewBefore` seconds before it expires.
public actor AppStoreTokens {
    public static let maxLifetime: TimeInterval = 300
    private let key: AppStoreKey
    private let lifetime: TimeInterval
    private let renewBefore: TimeInterval
    private let now: @Sendable () -> Date
    private var current: (token: String, expires: Date)?

    public init(key: AppStoreKey, lifetime: TimeInterval = 300, renewBefore: TimeInterval = 60,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.lifetime = min(max(lifetime, 1), Self.maxLifetime)
        self.renewBefore = min(renewBefore, self.lifetime / 2)
        self.now = now
    }

    /// The token for the next request: the one made before while it has more than `renewBefore` left.
    public func token() -> String {
        let at = now()
        if let current, current.expires.timeIntervalSince(at) > renewBefore { return current.token }
        let issued = at.timeIntervalSince1970.rounded(.down)
        let expires = issued + lifetime
        let header = #"{"alg":"ES256","kid":\#(Self.quoted(key.keyID)),"typ":"JWT"}"#
        let payload = #"{"iss":\#(Self.quoted(key.issuerID)),"iat":\#(Int(issued)),"exp":\#(Int(expires)),"aud":"appstoreconnect-v1","bid":\#(Self.quoted(key.bundleID))}"#
        let signingInput = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(payload.utf8))
        // A P-256 signature over SHA-256 cannot fail for a valid key; `try?` keeps a failure from becoming a crash.
        let signature = (try? key.key.signature(for: Data(signingInput.utf8)).rawRepresentation) ?? Data()
        let token = signingInput + "." + Base64URL.encode(signature)
        current = (token, Date(timeIntervalSince1970: expires))
        return token
    }

    /// A JSON string literal of `text` (the ids are plain ASCII in practice; anything else is escaped).
    static func quoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast())
    }
}
