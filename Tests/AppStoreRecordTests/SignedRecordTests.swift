import AppStoreRecord
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

/// A chain shaped as Apple's: a root, an intermediate with 1.2.840.113635.100.6.2.1, a leaf with
/// 1.2.840.113635.100.6.11.1, each minted here (the tests never need Apple's keys).
struct Minted {
    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let leafKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    static let end = start + 365 * 86_400

    init(intermediateExtension: Bool = true, leafExtension: Bool = true, leafEnd: Date = Minted.end) throws {
        let rootName = try DistinguishedName { CommonName("Test Root CA - G3") }
        let intermediateName = try DistinguishedName { CommonName("Test Worldwide Developer Relations") }
        let leafName = try DistinguishedName { CommonName("Test Mac App Store and iTunes Store Receipt Signing") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: Self.start, notValidAfter: Self.end,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }, issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: Self.start,
            notValidAfter: Self.end, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if intermediateExtension { Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 6, 2, 1], critical: false, value: [0x05, 0x00]) }
            }, issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: Self.start, notValidAfter: leafEnd,
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if leafExtension { Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 6, 11, 1], critical: false, value: [0x05, 0x00]) }
            }, issuerPrivateKey: .init(intermediateKey))
    }

    static func der(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes).base64EncodedString()
    }

    /// A compact JWS over `payload`, with `alg`, the chain `x5c` (the minted three by default), signed by `key`
    /// (the leaf's by default).
    func record(payload: [String: Any], alg: String = "ES256", x5c: [Certificate]? = nil,
                key: P256.Signing.PrivateKey? = nil) throws -> String {
        let header: [String: Any] = ["alg": alg, "x5c": try (x5c ?? [leaf, intermediate, root]).map(Self.der)]
        let head = Base64URL.encode(try JSONSerialization.data(withJSONObject: header))
        let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: payload))
        let signature = try (key ?? leafKey).signature(for: Data("\(head).\(body)".utf8))
        return "\(head).\(body).\(Base64URL.encode(signature.rawRepresentation))"
    }
}

/// A transaction's payload as the App Store signs it (the fields these tests need), signed a month in.
var transaction: [String: Any] {
    [
        "transactionId": "2000000123456789", "originalTransactionId": "2000000123456789", "bundleId": "com.reiterate.app",
        "productId": "com.reiterate.cheer.200", "quantity": 2, "environment": "Sandbox",
    "signedDate": (Minted.start.timeIntervalSince1970 + 30 * 86_400) * 1000,
    ]
}

@Suite struct SignedRecordTests {
    @Test func aRecordSignedAsApplesVerifiesWithItsPayloadAndDate() async throws {
        let minted = try Minted()
        let result = await SignedRecordVerifier(root: minted.root).verify(try minted.record(payload: transaction))
        let record = try result.get()
        #expect(record.signedDate == Minted.start + 30 * 86_400)
        let fields = try #require(try JSONSerialization.jsonObject(with: record.payload) as? [String: Any])
        #expect(fields["transactionId"] as? String == "2000000123456789" && fields["quantity"] as? Int == 2)
    }

    @Test func anAlgorithmOtherThanES256IsRefused() async throws {
        let minted = try Minted()
        for alg in ["HS256", "none", "ES384", ""] {
            let result = await SignedRecordVerifier(root: minted.root).verify(try minted.record(payload: transaction, alg: alg))
            #expect(result == .failure(.algorithm(alg)))
        }
    }

    @Test func aChainOfOtherThanThreeIsRefused() async throws {
        let minted = try Minted()
        let verifier = SignedRecordVerifier(root: minted.root)
        for chain in [[minted.leaf], [minted.leaf, minted.intermediate], [minted.leaf, minted.intermediate, minted.root, minted.root]] {
            #expect(await verifier.verify(try minted.record(payload: transaction, x5c: chain)) == .failure(.chainLength(chain.count)))
        }
    }

    @Test func applesExtensionsMustBeThere() async throws {
        let noIntermediateMark = try Minted(intermediateExtension: false)
        #expect(await SignedRecordVerifier(root: noIntermediateMark.root).verify(try noIntermediateMark.record(payload: transaction))
            == .failure(.missingAppleExtension(.intermediate)))
        let noLeafMark = try Minted(leafExtension: false)
        #expect(await SignedRecordVerifier(root: noLeafMark.root).verify(try noLeafMark.record(payload: transaction))
            == .failure(.missingAppleExtension(.leaf)))
    }

    @Test func aChainToAnotherRootIsNotTrusted() async throws {
        let minted = try Minted(), stranger = try Minted()
        let result = await SignedRecordVerifier(root: stranger.root).verify(try minted.record(payload: transaction))
        #expect(result == .failure(.untrustedChain(.otherRoot)))
        // The root the record carries is not what it is trusted by: the configured one is.
        let carried = try minted.record(payload: transaction, x5c: [minted.leaf, minted.intermediate, stranger.root])
        #expect(try await SignedRecordVerifier(root: minted.root).verify(carried).get().signedDate == Minted.start + 30 * 86_400)
    }

    @Test func theChainMustBeValidAtTheRecordsSignedDate() async throws {
        let shortLived = try Minted(leafEnd: Minted.start + 10 * 86_400)  // the leaf expired before the record was signed
        let result = await SignedRecordVerifier(root: shortLived.root).verify(try shortLived.record(payload: transaction))
        #expect(result == .failure(.untrustedChain(.notValidAtSignedDate)))
        var early = transaction
        early["signedDate"] = (Minted.start.timeIntervalSince1970 + 5 * 86_400) * 1000
        #expect(try await SignedRecordVerifier(root: shortLived.root).verify(try shortLived.record(payload: early)).get().payload.count > 0)
    }

    @Test func aSignatureByAnotherKeyOrOverOtherBytesIsRefused() async throws {
        let minted = try Minted()
        let verifier = SignedRecordVerifier(root: minted.root)
        #expect(await verifier.verify(try minted.record(payload: transaction, key: P256.Signing.PrivateKey())) == .failure(.badSignature))
        // The payload changed after signing (a quantity of 2 made 20): the signature no longer holds.
        let parts = try minted.record(payload: transaction).split(separator: ".")
        var changed = transaction
        changed["quantity"] = 20
        let forged = "\(parts[0]).\(Base64URL.encode(try JSONSerialization.data(withJSONObject: changed))).\(parts[2])"
        #expect(await verifier.verify(forged) == .failure(.badSignature))
    }

    @Test func whatIsNotARecordIsSaidSo() async throws {
        let minted = try Minted()
        let verifier = SignedRecordVerifier(root: minted.root)
        #expect(await verifier.verify("not a record") == .failure(.notCompact))
        #expect(await verifier.verify("a.b") == .failure(.notCompact))
        let head = Base64URL.encode(Data(#"{"alg":"ES256"}"#.utf8))
        #expect(await verifier.verify("\(head).e30.AA") == .failure(.unreadableHeader))
        var noDate = transaction
        noDate["signedDate"] = nil
        #expect(await verifier.verify(try minted.record(payload: noDate)) == .failure(.unreadablePayload))
        for rejection in [RecordRejection.notCompact, .badSignature, .chainLength(1), .missingAppleExtension(.leaf), .untrustedChain(.otherRoot)] {
            #expect(!rejection.words.isEmpty && !rejection.words.contains("X509") && !rejection.words.contains("Error"))
        }
    }
}

@Suite struct AppleRootTests {
    @Test func theBuiltInRootIsApplesRootCAG3ByItsFingerprint() async throws {
        let root = try #require(AppleRoot.g3())
        #expect(root.subject.description.contains("CN=Apple Root CA - G3"))
        #expect(root.issuer == root.subject)
        let utc = ISO8601DateFormatter()
        #expect(root.notValidBefore == utc.date(from: "2014-04-30T18:19:06Z") && root.notValidAfter == utc.date(from: "2039-04-30T18:19:06Z"))
        // A record minted by anyone else does not chain to it.
        let minted = try Minted()
        #expect(await SignedRecordVerifier(root: root).verify(try minted.record(payload: transaction))
            == .failure(.untrustedChain(.otherRoot)))
    }

    @Test func aFingerprintIsTheSHA256OfTheBytes() {
        #expect(AppleRoot.fingerprint(Data("abc".utf8)) == "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD")
    }
}
