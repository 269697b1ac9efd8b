import AppStoreRecord
import Crypto
import Foundation
import Testing

/// A clock the tests move by hand.
final class Clock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Date
    init(_ start: Date) { value = start }
    var now: Date { lock.withLock { value } }
    func advance(_ seconds: TimeInterval) { lock.withLock { value += seconds } }
}

func decodedPart(_ token: String, _ index: Int) throws -> [String: Any] {
    let part = token.split(separator: ".", omittingEmptySubsequences: false)[index]
    let data = try #require(Base64URL.decode(part))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

@Suite struct ServerAPITokenTests {
    let privateKey = P256.Signing.PrivateKey()
    var key: AppStoreKey { AppStoreKey(keyID: "2X9R4HXF34", issuerID: "57246542-96fe-1a63-e053-0824d011072a", bundleID: "com.reiterate.app", key: privateKey) }

    @Test func aTokenIsAnES256JWTWithTheClaimsAppleAsksFor() async throws {
        let clock = Clock(Date(timeIntervalSince1970: 1_790_000_000.7))
        let token = await AppStoreTokens(key: key, now: { clock.now }).token()
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let header = try decodedPart(token, 0), payload = try decodedPart(token, 1)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "2X9R4HXF34" && header["typ"] as? String == "JWT")
        #expect(payload["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(payload["iat"] as? Int == 1_790_000_000 && payload["exp"] as? Int == 1_790_000_300)
        #expect(payload["aud"] as? String == "appstoreconnect-v1" && payload["bid"] as? String == "com.reiterate.app")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(privateKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func aLifetimeBeyondFiveMinutesIsCut() async throws {
        let clock = Clock(Date(timeIntervalSince1970: 1_790_000_000))
        let payload = try decodedPart(await AppStoreTokens(key: key, lifetime: 3_600, now: { clock.now }).token(), 1)
        #expect((payload["exp"] as? Int ?? 0) - (payload["iat"] as? Int ?? 0) == 300)
    }

    @Test func oneTokenServesUntilShortlyBeforeItExpires() async throws {
        let clock = Clock(Date(timeIntervalSince1970: 1_790_000_000))
        let tokens = AppStoreTokens(key: key, now: { clock.now })
        let first = await tokens.token()
        clock.advance(239)
        #expect(await tokens.token() == first)
        clock.advance(2)  // 59 s left: a new one
        let second = await tokens.token()
        #expect(second != first)
        #expect(try decodedPart(second, 1)["iat"] as? Int == 1_790_000_241)
    }

    @Test func aKeyFileOpenToOthersIsRefusedAndOneOfOursIsRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("AuthKey_2X9R4HXF34.p8").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(privateKey.pemRepresentation.utf8), attributes: [.posixPermissions: 0o644]))
        #expect(throws: AppStoreKeyError.tooOpen(path: path, mode: 0o644)) {
            try AppStoreKey.load(path: path, keyID: "k", issuerID: "i", bundleID: "b")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let loaded = try AppStoreKey.load(path: path, keyID: "2X9R4HXF34", issuerID: "i", bundleID: "b")
        #expect(loaded.description == "App Store key 2X9R4HXF34 (issuer i, bundle b)")
        #expect(!"\(loaded)".contains("PRIVATE") && !String(reflecting: loaded).contains(privateKey.pemRepresentation))
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: AppStoreKeyError.notAKey(path: path)) { try AppStoreKey.load(path: path, keyID: "k", issuerID: "i", bundleID: "b") }
        #expect(throws: AppStoreKeyError.unreadable(path: path + ".missing")) {
            try AppStoreKey.load(path: path + ".missing", keyID: "k", issuerID: "i", bundleID: "b")
        }
        #expect(!AppStoreKeyError.tooOpen(path: path, mode: 0o644).words.contains("Error"))
    }
}
