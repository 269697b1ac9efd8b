import Crypto
import Foundation

extension ProxyCA {
    /// An iOS configuration profile (.mobileconfig, XML plist) holding the CA certificate as a
    /// `com.apple.security.root` payload; its identifiers and UUIDs follow from the fingerprint, so
    /// the same CA always gives the same profile. After installing it, the tester still turns on full
    /// trust for it (Settings › General › About › Certificate Trust Settings).
    public func mobileconfig() -> String {
        let id = fingerprintSHA256.replacingOccurrences(of: ":", with: "").prefix(16).lowercased()
        let hosts = permitted.dnsNames.map { "\($0) (and its subdomains)" } + permitted.ipAddresses
        let purpose = "Lets the reiterate-shop proxy read this device's HTTPS traffic to "
            + hosts.joined(separator: ", ") + ". It can sign for those hosts only."
        let certificate = Data(certificateDER).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let payload: [(String, PlistValue)] = [
            ("PayloadCertificateFileName", .string("reiterate-shop-proxy-ca.cer")),
            ("PayloadContent", .data(certificate)),
            ("PayloadDescription", .string("Adds the reiterate-shop proxy CA.")),
            ("PayloadDisplayName", .string("reiterate-shop proxy CA")),
            ("PayloadIdentifier", .string("com.reiterate-shop.proxy-ca.\(id).root")),
            ("PayloadType", .string("com.apple.security.root")),
            ("PayloadUUID", .string(stableUUID("root"))),
            ("PayloadVersion", .integer(1)),
        ]
        let profile: [(String, PlistValue)] = [
            ("PayloadContent", .array([.dictionary(payload)])),
            ("PayloadDescription", .string(purpose)),
            ("PayloadDisplayName", .string("reiterate-shop proxy CA")),
            ("PayloadIdentifier", .string("com.reiterate-shop.proxy-ca.\(id)")),
            ("PayloadOrganization", .string("reiterate-shop")),
            ("PayloadRemovalDisallowed", .bool(false)),
            ("PayloadType", .string("Configuration")),
            ("PayloadUUID", .string(stableUUID("profile"))),
            ("PayloadVersion", .integer(1)),
        ]
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            \(PlistValue.dictionary(profile).xml(indent: ""))
            </plist>

            """
    }

    /// A UUID (version 5 layout) from SHA-256 of `role` and the fingerprint: the same for this CA every time.
    private func stableUUID(_ role: String) -> String {
        var bytes = Array(SHA256.hash(data: Array("reiterate-shop \(role) \(fingerprintSHA256)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}

/// The few property-list values a profile needs, written as XML.
private indirect enum PlistValue {
    case string(String)
    case integer(Int)
    case bool(Bool)
    case data(String)
    case array([PlistValue])
    case dictionary([(String, PlistValue)])

    func xml(indent: String) -> String {
        let inner = indent + "\t"
        switch self {
        case .string(let text): return "\(indent)<string>\(Self.escaped(text))</string>"
        case .integer(let number): return "\(indent)<integer>\(number)</integer>"
        case .bool(let flag): return "\(indent)<\(flag ? "true" : "false")/>"
        case .data(let base64):
            let lines = base64.split(separator: "\n").map { "\(indent)\($0)" }
            return (["\(indent)<data>"] + lines + ["\(indent)</data>"]).joined(separator: "\n")
        case .array(let items):
            return (["\(indent)<array>"] + items.map { $0.xml(indent: inner) } + ["\(indent)</array>"]).joined(separator: "\n")
        case .dictionary(let entries):
            let body = entries.flatMap { ["\(inner)<key>\(Self.escaped($0.0))</key>", $0.1.xml(indent: inner)] }
            return (["\(indent)<dict>"] + body + ["\(indent)</dict>"]).joined(separator: "\n")
        }
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
