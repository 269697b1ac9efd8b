import Crypto
import Foundation
import Synchronization
import X509

/// The proxy's own certificate authority: kept in a folder, limited by name constraints to the hosts
/// it intercepts, and signing a leaf per host on demand.
public final class ProxyCA: Sendable {
    /// The hosts this CA may sign for, as read back from its certificate's own extension.
    public let permitted: PermittedNames
    /// The CA certificate, PEM.
    public let certificatePEM: String
    /// The CA certificate, DER.
    public let certificateDER: [UInt8]
    /// SHA-256 of the DER certificate, `AB:CD:…`, as `openssl x509 -fingerprint -sha256` prints it.
    public let fingerprintSHA256: String
    /// When the CA stops being valid.
    public let notAfter: Date

    let certificate: Certificate
    private let key: P256.Signing.PrivateKey
    private let leaves = Mutex<[HostName: LeafIdentity]>([:])

    private init(certificate: Certificate, key: P256.Signing.PrivateKey, permitted: PermittedNames) throws(ProxyCAError) {
        do {
            certificatePEM = try Minting.pem(certificate)
            certificateDER = try Minting.der(certificate)
        } catch {
            throw .corrupt
        }
        self.certificate = certificate
        self.key = key
        self.permitted = permitted
        self.notAfter = certificate.notValidAfter
        fingerprintSHA256 = SHA256.hash(data: certificateDER).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// Loads the CA from `folder` (`ca.pem` + `ca-key.pem`), or makes one there on first use.
    /// A key file open to other users, a certificate that is not this kind of name-constrained CA,
    /// or an expired one is refused (the error says to renew).
    public static func loadOrCreate(folder: URL, permitted: PermittedNames, now: Date = Date()) throws(ProxyCAError) -> ProxyCA {
        let files = CAFiles(folder: folder)
        switch files.presence {
        case .none: return try create(files, permitted: permitted, now: now)
        case .one: throw .incomplete
        case .both: return try load(files, now: now)
        }
    }

    /// Makes a new CA in `folder`, replacing the old files (for `proxy ca --renew`).
    public static func renew(folder: URL, permitted: PermittedNames, now: Date = Date()) throws(ProxyCAError) -> ProxyCA {
        try create(CAFiles(folder: folder), permitted: permitted, now: now)
    }

    /// `$XDG_STATE_HOME/reiterate-shop/proxy-ca` (an absolute XDG_STATE_HOME only), else
    /// `$HOME/.local/state/reiterate-shop/proxy-ca`; nil when neither is set.
    public static func defaultFolder(environment: [String: String]) -> URL? {
        let state: String
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            state = xdg
        } else if let home = environment["HOME"], !home.isEmpty {
            state = home + "/.local/state"
        } else {
            return nil
        }
        return URL(fileURLWithPath: state, isDirectory: true)
            .appendingPathComponent("reiterate-shop", isDirectory: true)
            .appendingPathComponent("proxy-ca", isDirectory: true)
    }

    /// The hosts in `hosts` the CA may not sign for (empty when all are covered), as given.
    public func uncovered(_ hosts: [String]) -> [String] {
        hosts.filter { !permitted.covers($0) }
    }

    /// A leaf for `host` (a DNS name or an IP literal), made once per host and kept (a new one when the
    /// kept one has less than a day left). Throws when the CA's constraints do not cover `host`.
    public func leaf(for host: String, now: Date = Date()) throws(ProxyCAError) -> LeafIdentity {
        guard let name = HostName(host), permitted.covers(name) else { throw .hostNotCovered(host) }
        return try leaves.withLock { (kept: inout [HostName: LeafIdentity]) throws(ProxyCAError) -> LeafIdentity in
            if let leaf = kept[name], leaf.notBefore <= now, now + Minting.day < leaf.notAfter { return leaf }
            let leaf = try Minting.leaf(for: name, issuer: certificate, issuerKey: key, now: now)
            kept[name] = leaf
            return leaf
        }
    }

    /// A leaf for `host` without the coverage check, for tests that show verifiers refuse it.
    func uncheckedLeaf(for host: String, now: Date = Date()) throws(ProxyCAError) -> LeafIdentity {
        guard let name = HostName(host) else { throw .hostNotCovered(host) }
        return try Minting.leaf(for: name, issuer: certificate, issuerKey: key, now: now)
    }

    private static func create(_ files: CAFiles, permitted: PermittedNames, now: Date) throws(ProxyCAError) -> ProxyCA {
        guard !permitted.isEmpty else { throw .nothingPermitted }
        let key = P256.Signing.PrivateKey()
        let certificate = try Minting.authority(permitted: permitted, key: key, now: now)
        let ca = try ProxyCA(certificate: certificate, key: key, permitted: permitted)
        try files.store(certificate: ca.certificatePEM, key: key.pemRepresentation + "\n")
        return ca
    }

    private static func load(_ files: CAFiles, now: Date) throws(ProxyCAError) -> ProxyCA {
        let (certificateText, keyText) = try files.read()
        let certificate: Certificate
        let key: P256.Signing.PrivateKey
        do {
            certificate = try Certificate(pemEncoded: certificateText)
            key = try P256.Signing.PrivateKey(pemRepresentation: keyText)
        } catch {
            throw .corrupt
        }
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else { throw .corrupt }
        let constraints: NameConstraints?
        let basics: BasicConstraints?
        do {
            constraints = try certificate.extensions.nameConstraints
            basics = try certificate.extensions.basicConstraints
        } catch {
            throw .corrupt
        }
        guard case .isCertificateAuthority = basics,
            certificate.extensions[oid: .X509ExtensionID.nameConstraints]?.critical == true,
            let constraints, let permitted = PermittedNames(constraints)
        else { throw .notNameConstrained }
        guard now < certificate.notValidAfter else { throw .expired }
        return try ProxyCA(certificate: certificate, key: key, permitted: permitted)
    }
}

extension ProxyCA: CustomStringConvertible, CustomReflectable {
    /// Names the CA by its fingerprint and hosts; never its key.
    public var description: String {
        "proxy CA \(fingerprintSHA256) for \(permitted.hosts.joined(separator: ", "))"
    }

    /// Shows no key to `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: ["permitted": permitted, "fingerprintSHA256": fingerprintSHA256, "notAfter": notAfter])
    }
}

/// A leaf certificate and its key, for the TLS server side of one intercepted host.
public struct LeafIdentity: Sendable {
    /// The leaf then the CA, PEM.
    public var certificateChainPEM: String
    /// The leaf's key, PKCS#8 (`BEGIN PRIVATE KEY`, which BoringSSL and NIOSSL read). Never log it.
    public var privateKeyPEM: String
    /// The leaf certificate alone, DER.
    public var certificateDER: [UInt8]
    var notBefore: Date
    /// When the leaf stops being valid.
    public var notAfter: Date
}

extension LeafIdentity: CustomStringConvertible, CustomReflectable {
    /// Says until when the leaf holds; never its key.
    public var description: String { "leaf certificate valid until \(notAfter)" }

    /// Shows no key to `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: ["notAfter": notAfter, "certificateDER": certificateDER.count])
    }
}
