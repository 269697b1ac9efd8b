import Crypto
import Foundation
import SwiftASN1
import X509

/// Making the CA's certificate and the leaves it signs.
enum Minting {
    static let hour: TimeInterval = 3600
    static let day: TimeInterval = 86_400
    /// Ten years (with their leap days).
    static let caLifetime: TimeInterval = 3653 * day
    /// What Apple requires of publicly-trusted leaves; well under the 825 days it allows otherwise.
    static let leafLifetime: TimeInterval = 397 * day

    /// A self-signed CA for `permitted`: EC P-256, CA:TRUE with path length 0, keyCertSign and cRLSign,
    /// its subject key identifier, critical name constraints; valid from an hour before `now` for ten years.
    static func authority(permitted: PermittedNames, key: P256.Signing.PrivateKey, now: Date) throws(ProxyCAError) -> Certificate {
        do {
            let publicKey = Certificate.PublicKey(key.publicKey)
            let name = try DistinguishedName {
                OrganizationName("reiterate-shop")
                CommonName("reiterate-shop proxy CA (\(machineLabel()))")
            }
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
                Critical(permitted.nameConstraints)
            }
            let start = now - hour
            return try Certificate(
                version: .v3, serialNumber: serialNumber(), publicKey: publicKey,
                notValidBefore: start, notValidAfter: start + caLifetime,
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(key)
            )
        } catch {
            throw .signingFailed
        }
    }

    /// A leaf for `host` signed by `issuer` with `issuerKey`, whatever the issuer's constraints say.
    static func leaf(
        for host: HostName, issuer: Certificate, issuerKey: P256.Signing.PrivateKey, now: Date
    ) throws(ProxyCAError) -> LeafIdentity {
        let key = P256.Signing.PrivateKey()
        do {
            let publicKey = Certificate.PublicKey(key.publicKey)
            let authorityKey = try issuer.extensions.subjectKeyIdentifier?.keyIdentifier
                ?? SubjectKeyIdentifier(hash: issuer.publicKey).keyIdentifier
            let alternativeName: GeneralName =
                switch host {
                case .dns(let name): .dnsName(name)
                case .ip(let address): .ipAddress(ASN1OctetString(contentBytes: ArraySlice(address.bytes)))
                }
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([alternativeName])
                AuthorityKeyIdentifier(keyIdentifier: authorityKey)
                SubjectKeyIdentifier(hash: publicKey)
            }
            let subject = try DistinguishedName {
                OrganizationName("reiterate-shop")
                CommonName(commonName(for: host))
            }
            let start = now - hour
            let end = min(start + leafLifetime, issuer.notValidAfter)
            let certificate = try Certificate(
                version: .v3, serialNumber: serialNumber(), publicKey: publicKey,
                notValidBefore: start, notValidAfter: end,
                issuer: issuer.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(issuerKey)
            )
            let chain = try pem(certificate) + pem(issuer)
            return LeafIdentity(
                certificateChainPEM: chain, privateKeyPEM: key.pemRepresentation + "\n",
                certificateDER: try der(certificate), notBefore: start, notAfter: end
            )
        } catch {
            throw .signingFailed
        }
    }

    /// The leaf's common name: the host; an address gets words before it, since OpenSSL checks the CN
    /// of a leaf without a DNS SAN against the DNS constraints when it looks like a name (`127.0.0.1` does).
    static func commonName(for host: HostName) -> String {
        switch host {
        case .dns(let name): name
        case .ip(let address): "IP address \(address.text)"
        }
    }

    static func pem(_ certificate: Certificate) throws -> String {
        try certificate.serializeAsPEM().pemString + "\n"
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// 16 random bytes, positive and without a leading zero byte.
    static func serialNumber() -> Certificate.SerialNumber {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        return Certificate.SerialNumber(bytes: bytes)
    }

    /// The machine's short host name, else a short random id: tells one tester's CA from another's.
    static func machineLabel() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        let kept = host.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        guard kept.isEmpty || kept == "localhost" else { return String(kept.prefix(40)) }
        return String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }
}
