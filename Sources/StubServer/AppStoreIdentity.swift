import Crypto
import Foundation
import StubCore
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The App Store's keys as the stand-in plays them, minted in memory at start: a test root ("Reiterate
/// Stub Root CA - G3"), an intermediate and a leaf shaped as Apple's (its extensions
/// 1.2.840.113635.100.6.2.1 and 1.2.840.113635.100.6.11.1), whose leaf signs the transactions; an
/// unrelated chain for the `broken_chain` fault; and the App Store Connect API key the tool signs its
/// tokens with. The private keys never leave this value but for the `.p8` file `writeFiles` makes.
public struct AppStoreIdentity: Sendable {
    /// A root, an intermediate and a leaf, and the leaf's key.
    struct Chain: Sendable {
        let root: Certificate
        let intermediate: Certificate
        let leaf: Certificate
        let leafKey: P256.Signing.PrivateKey
        /// The JWS header's `x5c`: leaf, intermediate, root, each DER in standard base64.
        let x5c: [String]

        static let day: TimeInterval = 86_400

        /// P-256 keys, ecdsaWithSHA256; valid from a day before `now` for two years.
        init(rootName: String, now: Date) throws {
            let rootKey = P256.Signing.PrivateKey(), intermediateKey = P256.Signing.PrivateKey()
            leafKey = P256.Signing.PrivateKey()
            let start = now - Self.day, end = now + 730 * Self.day
            let rootSubject = try DistinguishedName {
                OrganizationName("reiterate-stub")
                CommonName(rootName)
            }
            let intermediateSubject = try DistinguishedName {
                OrganizationName("reiterate-stub")
                CommonName("Reiterate Stub Worldwide Developer Relations")
            }
            let leafSubject = try DistinguishedName {
                OrganizationName("reiterate-stub")
                CommonName("Reiterate Stub App Store Receipt Signing")
            }
            root = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: start, notValidAfter: end,
                issuer: rootSubject, subject: rootSubject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                }, issuerPrivateKey: .init(rootKey))
            intermediate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: start, notValidAfter: end,
                issuer: rootSubject, subject: intermediateSubject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 6, 2, 1], critical: false, value: [0x05, 0x00])
                }, issuerPrivateKey: .init(rootKey))
            leaf = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: start, notValidAfter: end,
                issuer: intermediateSubject, subject: leafSubject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 6, 11, 1], critical: false, value: [0x05, 0x00])
                }, issuerPrivateKey: .init(intermediateKey))
            x5c = try [leaf, intermediate, root].map { certificate in
                var serializer = DER.Serializer()
                try serializer.serialize(certificate)
                return Data(serializer.serializedBytes).base64EncodedString()
            }
        }
    }

    let chain: Chain
    /// The `broken_chain` fault's: a chain of the same shape to a root no one trusts.
    let unrelated: Chain
    /// The App Store Connect API key (`STUBKEY001`): the tool signs its tokens with it.
    let apiKey: P256.Signing.PrivateKey

    /// Mints both chains and the API key at `now`.
    public init(now: Date = Date()) throws {
        chain = try Chain(rootName: "Reiterate Stub Root CA - G3", now: now)
        unrelated = try Chain(rootName: "Unrelated Stub Root CA", now: now)
        apiKey = P256.Signing.PrivateKey()
    }

    /// The public half of the API key: what a token's signature must verify with.
    public var apiPublicKey: P256.Signing.PublicKey { apiKey.publicKey }

    /// The test root, PEM: what the tool is told to trust in place of Apple Root CA - G3.
    public func rootPEM() throws -> String {
        try chain.root.serializeAsPEM().pemString + "\n"
    }

    // MARK: Signing

    /// A transaction signed as the App Store signs it: a compact JWS, header `{"alg":"ES256","x5c":[…]}`,
    /// signature ES256 as raw r‖s, by the leaf's key. `unrelated`: the other chain and its leaf
    /// (`broken_chain`); `breakSignature`: one byte of the signature changed (`broken_signature`).
    func sign(_ payload: AppStoreTransaction.Payload, unrelated useUnrelated: Bool = false, breakSignature: Bool = false) throws -> String {
        let chain = useUnrelated ? unrelated : self.chain
        let header = Base64URL.encode(try StubJSON.encode(JWSHeader(alg: "ES256", x5c: chain.x5c)))
        let body = Base64URL.encode(try StubJSON.encode(payload))
        var signature = Array(try chain.leafKey.signature(for: Data("\(header).\(body)".utf8)).rawRepresentation)
        if breakSignature, !signature.isEmpty { signature[signature.count / 2] ^= 0x01 }
        return "\(header).\(body).\(Base64URL.encode(signature))"
    }

    struct JWSHeader: Encodable {
        let alg: String
        let x5c: [String]
    }

    // MARK: Files

    /// What `writeFiles` wrote: the folder's files, absolute.
    public struct Files: Sendable, Equatable {
        public let root: String
        public let key: String
        public let settings: String
    }

    /// Creates `folder` when missing and writes `root.pem` (the test root), `AuthKey_STUBKEY001.p8` (the
    /// API key, PKCS#8 PEM, created 0600) and `appstore.json` (the ids and the two files' absolute
    /// paths, as the tool's `[environments.NAME.appstore]` table wants them). Each file replaces any
    /// one before it; the key's text is in the `.p8` only.
    public func writeFiles(to folder: String) throws -> Files {
        let directory = URL(fileURLWithPath: folder, isDirectory: true).standardizedFileURL
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = Files(
            root: directory.appendingPathComponent("root.pem").path,
            key: directory.appendingPathComponent("AuthKey_\(AppStoreAccount.keyID).p8").path,
            settings: directory.appendingPathComponent("appstore.json").path
        )
        try Self.replace(files.key, with: Array((apiKey.pemRepresentation + "\n").utf8), mode: 0o600)
        try Self.replace(files.root, with: Array(try rootPEM().utf8), mode: 0o644)
        let settings = SettingsFile(keyID: AppStoreAccount.keyID, issuerID: AppStoreAccount.issuerID, bundleID: AppStoreAccount.bundleID,
                                    environment: AppStoreAccount.environment, keyFile: files.key, rootCA: files.root)
        try Self.replace(files.settings, with: try StubJSON.encode(settings) + [0x0A], mode: 0o644)
        return files
    }

    /// `appstore.json`.
    struct SettingsFile: Encodable {
        let keyID, issuerID, bundleID, environment, keyFile, rootCA: String
        enum CodingKeys: String, CodingKey {
            case keyID = "key_id", issuerID = "issuer_id", bundleID = "bundle_id", environment, keyFile = "key_file", rootCA = "root_ca"
        }
    }

    /// Why a file could not be written (its path and the system's words).
    public struct FileError: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "cannot write \(path): \(reason)" }
    }

    /// Writes `bytes` to a new file beside `path`, created with `mode` (the umask may only narrow it; it
    /// is never changed after), and renames it over `path`.
    static func replace(_ path: String, with bytes: [UInt8], mode: mode_t) throws {
        let temporary = path + ".\(UInt64.random(in: 0...UInt64.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw FileError(path: path, reason: String(cString: strerror(errno))) }
        var written = 0
        var failure: Int32 = 0
        while failure == 0, written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { written += count } else if count < 0, errno != EINTR { failure = errno }
        }
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw FileError(path: path, reason: String(cString: strerror(failure)))
        }
    }
}

/// base64url without padding (RFC 7515's encoding of a JWS's parts).
enum Base64URL {
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Nil for text that is not base64url (padding is not expected, but taken).
    static func decode(_ text: Substring) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
