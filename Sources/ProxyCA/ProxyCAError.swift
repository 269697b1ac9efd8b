/// What can stop the proxy's CA from being made, loaded or used; each reads as one plain line.
public enum ProxyCAError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The CA's folder (or a file in it) cannot be created or written.
    case folderNotWritable
    /// A file of the CA exists but cannot be read.
    case unreadable
    /// The files cannot be understood, or the key does not belong to the certificate.
    case corrupt
    /// Only one of the two files (certificate, key) is there.
    case incomplete
    /// The key file can be read or written by others (`mode`: its permission bits); it is not used.
    case keyFileTooOpen(mode: UInt16)
    /// The certificate found is not a CA limited by name constraints; it is not used.
    case notNameConstrained
    /// The CA's validity has ended.
    case expired
    /// No host was given, so the CA would sign for nothing.
    case nothingPermitted
    /// The CA may not sign for this host.
    case hostNotCovered(String)
    /// Making a key or a signature failed.
    case signingFailed

    private static let renew = "run `reiterate-shop proxy ca --renew` to make a new one (then install it on the phone again)"

    public var description: String {
        switch self {
        case .folderNotWritable:
            "The proxy CA's folder cannot be created or written: check that it is yours and has room."
        case .unreadable:
            "The proxy CA's files cannot be read: check their owner and permissions, or \(Self.renew)."
        case .corrupt:
            "The proxy CA's files are damaged or do not belong together: \(Self.renew)."
        case .incomplete:
            "The proxy CA's folder holds its certificate or its key but not both: \(Self.renew)."
        case .keyFileTooOpen(let mode):
            "The proxy CA's key file (ca-key.pem) is open to other users (mode \(String(mode, radix: 8))), so it is not used: "
                + "run `chmod 600 ca-key.pem` in the CA's folder, or \(Self.renew)."
        case .notNameConstrained:
            "The certificate in the proxy CA's folder is not limited to the proxy's hosts, so it is not used: \(Self.renew)."
        case .expired:
            "The proxy CA has expired: \(Self.renew)."
        case .nothingPermitted:
            "No host to intercept was given, so the proxy CA could sign for nothing: name the shop's host."
        case .hostNotCovered(let host):
            "The proxy CA may not sign for \(Self.printable(host)): \(Self.renew) for the hosts you need."
        case .signingFailed:
            "The proxy could not make a key or sign a certificate."
        }
    }

    /// `host` without control characters and cut to a readable length (it may come off the network).
    private static func printable(_ host: String) -> String {
        let shown = host.unicodeScalars.filter { ![.control, .format, .unassigned].contains($0.properties.generalCategory) }
        let kept = String(String.UnicodeScalarView(shown))
        return kept.count > 80 ? String(kept.prefix(80)) + "…" : kept
    }
}
