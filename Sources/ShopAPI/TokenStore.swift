/// The tokens a client sends. An actor, so refreshes and readers never race; the client is the only writer.
public actor TokenStore {
    public private(set) var accessToken: String?
    public private(set) var refreshToken: String?

    public init(accessToken: String?, refreshToken: String? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }

    public func update(accessToken: String, refreshToken: String?) {
        self.accessToken = accessToken
        if let refreshToken { self.refreshToken = refreshToken }
    }

    /// Whether `token` can travel in `Authorization: Bearer` (RFC 6750 b64token): letters, digits and
    /// `-._~+/`, then optional `=` padding. Anything else (a control character, a stray newline from
    /// a token file) would break the header — and could echo the token in an error.
    public static func isValidBearerToken(_ token: String) -> Bool {
        guard !token.isEmpty else { return false }
        var padding = false
        for byte in token.utf8 {
            let ok = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/")].contains(byte)
            if byte == UInt8(ascii: "=") {
                padding = true
            } else if !ok || padding {
                return false
            }
        }
        return true
    }
}
