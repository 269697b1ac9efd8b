import Crypto
import Foundation
import X509

/// Apple Root CA - G3, the root the App Store's records chain to (issue 38: the default of `root_ca`),
/// built in by its certificate and checked against its published SHA-256 fingerprint before use.
public enum AppleRoot {
    /// DER, base64, as Apple publishes it (https://www.apple.com/certificateauthority/AppleRootCA-G3.cer).
    static let g3DER = """
        MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1\
        dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBSb290IENB\
        IC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmljYXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49AgEGBSuBBAAi\
        A2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517IDvYuVTZXpmkOlEK\
        MaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gAMGUCMQCD6cHEFl4aXTQY\
        2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWTxnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM6BgD56KyKA==
        """

    /// Its SHA-256 fingerprint, as Apple publishes it.
    public static let g3Fingerprint = "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179"

    /// The built-in root, or nil when the bytes kept here do not match the fingerprint (never believed then).
    public static func g3() -> Certificate? {
        guard let der = Data(base64Encoded: g3DER), fingerprint(der) == g3Fingerprint else { return nil }
        return try? Certificate(derEncoded: Array(der))
    }

    /// The SHA-256 of `der`, upper-case hexadecimal.
    public static func fingerprint(_ der: Data) -> String {
        SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined()
    }
}

/// Why the configured `root_ca` cannot be used, in words that name the setting, not a library.
public enum RootFileError: Error, Sendable, Equatable {
    case unreadable
    case notACertificate
    case builtInDamaged

    public var words: String {
        switch self {
        case .unreadable: "the root_ca file of the [appstore] table cannot be read"
        case .notACertificate: "the root_ca file of the [appstore] table is not a PEM certificate"
        case .builtInDamaged: "the built-in Apple Root CA - G3 does not match its fingerprint, so no record can be believed"
        }
    }
}

extension TransactionChecker {
    /// A checker whose records must chain to the root in the PEM file `rootFile`, or to Apple Root CA - G3 when nil.
    public static func make(rootFile: String?, bundleID: String, environment: String) throws(RootFileError) -> TransactionChecker {
        let root: Certificate
        if let rootFile {
            guard let data = FileManager.default.contents(atPath: rootFile), let pem = String(data: data, encoding: .utf8) else { throw .unreadable }
            guard let certificate = try? Certificate(pemEncoded: pem) else { throw .notACertificate }
            root = certificate
        } else {
            guard let g3 = AppleRoot.g3() else { throw .builtInDamaged }
            root = g3
        }
        return TransactionChecker(verifier: SignedRecordVerifier(root: root), bundleID: bundleID, environment: environment)
    }
}
