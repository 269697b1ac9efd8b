import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Why a signed record of the App Store is not believed. Each is one finding, "not verified", and the
/// record gives no verdict (issue 38): nothing it says is used.
public enum RecordRejection: Error, Sendable, Equatable {
    /// Not three base64url parts, or a part that does not decode.
    case notCompact
    /// The protected header is not a JSON object, or has no `x5c` list of strings.
    case unreadableHeader
    /// `alg` is not ES256 (the value as sent).
    case algorithm(String)
    /// `x5c` does not hold exactly three certificates (leaf, intermediate, root): how many it holds.
    case chainLength(Int)
    /// The certificate at this position of `x5c` is not a DER certificate.
    case unreadableCertificate(ChainPosition)
    /// The certificate at this position lacks Apple's extension for it.
    case missingAppleExtension(ChainPosition)
    /// The payload is not a JSON object with a `signedDate` in milliseconds.
    case unreadablePayload
    /// The chain does not verify to the configured root at the record's `signedDate`.
    case untrustedChain(ChainFailure)
    /// The signature does not verify with the leaf's key.
    case badSignature

    /// One line, in plain words, for the finding.
    public var words: String {
        switch self {
        case .notCompact: "not a signed record (not three base64url parts)"
        case .unreadableHeader: "its header is not readable (no x5c certificate list)"
        case let .algorithm(alg): "signed with \(alg.isEmpty ? "no algorithm" : alg), not ES256"
        case let .chainLength(n): "its certificate chain holds \(n) certificate\(n == 1 ? "" : "s"), not 3 (leaf, intermediate, root)"
        case let .unreadableCertificate(at): "its \(at.rawValue) certificate is not readable"
        case let .missingAppleExtension(at): "its \(at.rawValue) certificate lacks Apple's extension \(at.appleExtension)"
        case .unreadablePayload: "its payload is not readable (no signedDate)"
        case let .untrustedChain(why): "its certificate chain does not lead to the configured root: \(why.words)"
        case .badSignature: "its signature does not verify with the leaf certificate's key"
        }
    }
}

/// Why a chain did not verify to the configured root.
public enum ChainFailure: Sendable, Equatable {
    /// A certificate of it (or the root) was not valid at the record's `signedDate`.
    case notValidAtSignedDate
    /// Valid then, but not signed up to the configured root.
    case otherRoot

    public var words: String {
        switch self {
        case .notValidAtSignedDate: "a certificate of it was not valid at the record's signedDate"
        case .otherRoot: "it was signed under another root"
        }
    }
}

/// Where a certificate stands in a record's `x5c` chain.
public enum ChainPosition: String, Sendable, Equatable {
    case leaf, intermediate, root

    /// The extension Apple puts in this position's certificate (none for the root).
    public var appleExtension: ASN1ObjectIdentifier {
        switch self {
        case .leaf: [1, 2, 840, 113_635, 100, 6, 11, 1]
        case .intermediate: [1, 2, 840, 113_635, 100, 6, 2, 1]
        case .root: []
        }
    }
}

/// A record whose signature and chain verified: its payload's bytes (JSON) and when Apple signed it.
public struct VerifiedRecord: Sendable, Equatable {
    public let payload: Data
    public let signedDate: Date
}

/// Verifies the App Store's signed records (JWS, compact form) as Apple's own library does: ES256 only,
/// an `x5c` chain of exactly three, Apple's extensions on the leaf and the intermediate, the chain
/// verified (swift-certificates) to the configured root within its validity at the record's
/// `signedDate`, and the signature verified with the leaf's key. Nothing is read from a record that
/// fails any of these.
public struct SignedRecordVerifier: Sendable {
    public let root: Certificate

    public init(root: Certificate) { self.root = root }

    public func verify(_ compact: String) async -> Result<VerifiedRecord, RecordRejection> {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else { return .failure(.notCompact) }
        guard let header = try? JSONSerialization.jsonObject(with: headerBytes) as? [String: Any] else { return .failure(.unreadableHeader) }
        let alg = header["alg"] as? String ?? ""
        guard alg == "ES256" else { return .failure(.algorithm(alg)) }
        guard let x5c = header["x5c"] as? [String] else { return .failure(.unreadableHeader) }
        guard x5c.count == 3 else { return .failure(.chainLength(x5c.count)) }
        var chain: [Certificate] = []
        for (text, position) in zip(x5c, [ChainPosition.leaf, .intermediate, .root]) {
            // x5c is base64 (not base64url) DER, RFC 7515 §4.1.6.
            guard let der = Data(base64Encoded: text), let certificate = try? Certificate(derEncoded: Array(der)) else {
                return .failure(.unreadableCertificate(position))
            }
            chain.append(certificate)
        }
        let leaf = chain[0], intermediate = chain[1]
        guard leaf.extensions[oid: ChainPosition.leaf.appleExtension] != nil else { return .failure(.missingAppleExtension(.leaf)) }
        guard intermediate.extensions[oid: ChainPosition.intermediate.appleExtension] != nil else {
            return .failure(.missingAppleExtension(.intermediate))
        }
        // The time the chain must be valid at is the record's own; it is read before the record is believed,
        // and used for nothing else unless everything verifies.
        guard let fields = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
              let signedMillis = (fields["signedDate"] as? NSNumber)?.doubleValue
        else { return .failure(.unreadablePayload) }
        let signedDate = Date(timeIntervalSince1970: signedMillis / 1000)
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: signedDate)
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) {
        case .validCertificate: break
        case .couldNotValidate:
            let outOfDate = [leaf, intermediate, root].contains { !($0.notValidBefore...$0.notValidAfter).contains(signedDate) }
            return .failure(.untrustedChain(outOfDate ? .notValidAtSignedDate : .otherRoot))
        }
        guard let key = P256.Signing.PublicKey(leaf.publicKey),
              let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
              key.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return .failure(.badSignature) }
        return .success(VerifiedRecord(payload: payload, signedDate: signedDate))
    }
}

/// base64url without padding (RFC 4648 §5), as JWS uses it.
public enum Base64URL {
    public static func decode(_ text: Substring) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !standard.contains("=") else { return nil }
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard)
    }

    public static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
