/// Reads a complete head (its lines already found by `FieldScan`, every LF known to follow a CR) into a
/// `RequestHead`, refusing whatever a parser could read another way.
struct HeadParser {
    let limits: WireLimits

    /// `p` holds the head and ends with its empty line; the request line starts at `first`.
    func parse(_ p: UnsafeBufferPointer<UInt8>, first: Int) throws(WireRefusal) -> RequestHead {
        let end = p.count - 2
        var lineStart = first
        var lineEnd = Self.lineEnd(p, from: lineStart)
        let line = try Self.requestLine(UnsafeBufferPointer(rebasing: p[lineStart..<lineEnd]))
        var headers: [HeaderField] = []
        lineStart = lineEnd + 2
        while lineStart < end {
            lineEnd = Self.lineEnd(p, from: lineStart)
            let field = try Self.field(UnsafeBufferPointer(rebasing: p[lineStart..<lineEnd]))
            headers.append(field)
            lineStart = lineEnd + 2
        }
        return try head(method: line.method, target: line.target, minor: line.minor, headers: headers)
    }

    /// The index of the CR that ends the line starting at `start`.
    static func lineEnd(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        while p[i] != ASCII.lf { i += 1 }
        return i - 1
    }

    // MARK: Request line

    /// `METHOD SP request-target SP HTTP/1.x`, single spaces.
    static func requestLine(_ line: UnsafeBufferPointer<UInt8>) throws(WireRefusal) -> (method: String, target: String, minor: Int) {
        guard let sp1 = line.firstIndex(of: ASCII.space), sp1 > 0, line[..<sp1].allSatisfy(ASCII.isTokenChar) else {
            throw .malformedRequestLine
        }
        let afterMethod = sp1 + 1
        guard let sp2 = line[afterMethod...].firstIndex(of: ASCII.space), sp2 > afterMethod else { throw .malformedRequestLine }
        let target = UnsafeBufferPointer(rebasing: line[afterMethod..<sp2])
        guard target.allSatisfy(ASCII.isTargetByte) else {
            // A control, a tab, a byte beyond ASCII: the line cannot be split the one way.
            throw target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) ? .malformedTarget : .malformedRequestLine
        }
        let minor = try version(UnsafeBufferPointer(rebasing: line[(sp2 + 1)...]))
        let method = String(decoding: line[..<sp1], as: UTF8.self)
        try checkTarget(target, method: method)
        return (method, String(decoding: target, as: UTF8.self), minor)
    }

    /// `HTTP/1.0` → 0, `HTTP/1.1` → 1; another `HTTP/d.d` is unsupported, anything else malformed.
    static func version(_ v: UnsafeBufferPointer<UInt8>) throws(WireRefusal) -> Int {
        guard v.count == 8, v[..<5].elementsEqual("HTTP/".utf8), ASCII.isDigit(v[5]), v[6] == UInt8(ascii: "."),
              ASCII.isDigit(v[7]) else { throw .malformedRequestLine }
        guard v[5] == UInt8(ascii: "1"), v[7] == UInt8(ascii: "0") || v[7] == UInt8(ascii: "1") else { throw .unsupportedVersion }
        return Int(v[7] - UInt8(ascii: "0"))
    }

    /// The target's form must suit the method: host:port for CONNECT and only there, `*` for OPTIONS only.
    static func checkTarget(_ t: UnsafeBufferPointer<UInt8>, method: String) throws(WireRefusal) {
        if method == "CONNECT" {
            guard isAuthority(Array(t), portRequired: true) else { throw .malformedTarget }
        } else if t[0] == UInt8(ascii: "/") {
            return
        } else if t.count == 1, t[0] == UInt8(ascii: "*") {
            guard method == "OPTIONS" else { throw .malformedTarget }
        } else {
            // absolute-form: scheme "://" authority, the authority not empty.
            guard ASCII.isAlpha(t[0]), let colon = t.firstIndex(of: ASCII.colon),
                  t[..<colon].allSatisfy({ ASCII.isAlpha($0) || ASCII.isDigit($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }),
                  t[colon...].starts(with: "://".utf8), colon + 3 < t.count,
                  t[colon + 3] != UInt8(ascii: "/"), t[colon + 3] != UInt8(ascii: "?") else { throw .malformedTarget }
        }
    }

    /// `host[:port]`: a name (letters, digits, `-._~`), an IPv4 address or a bracketed IPv6 address; the
    /// port 0…65535 in at most five digits.
    static func isAuthority(_ a: [UInt8], portRequired: Bool) -> Bool {
        var host = a[...]
        var port: ArraySlice<UInt8>?
        if host.first == UInt8(ascii: "[") {
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let inside = host[(host.startIndex + 1)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ ASCII.hexValue($0) != nil || $0 == ASCII.colon || $0 == UInt8(ascii: ".") }) else {
                return false
            }
            let rest = host[(close + 1)...]
            if let colon = rest.first {
                guard colon == ASCII.colon else { return false }
                port = rest.dropFirst()
            }
            host = host[...close]
        } else {
            if let colon = host.lastIndex(of: ASCII.colon) {
                port = host[(colon + 1)...]
                host = host[..<colon]
            }
            let nameByte = { (b: UInt8) in
                ASCII.isAlpha(b) || ASCII.isDigit(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_")
                    || b == UInt8(ascii: "~")
            }
            guard !host.isEmpty, host.allSatisfy(nameByte) else { return false }
        }
        guard let port else { return !portRequired }
        guard (1...5).contains(port.count), port.allSatisfy(ASCII.isDigit) else { return false }
        return port.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 65535
    }

    // MARK: Header lines

    /// `name: value`, the name a token right before the colon, the value without controls and in UTF-8.
    static func field(_ line: UnsafeBufferPointer<UInt8>) throws(WireRefusal) -> HeaderField {
        let (name, value, ascii) = try fieldRanges(line)
        let bytes = UnsafeBufferPointer(rebasing: line[value])
        let text: String
        if ascii {
            text = String(decoding: bytes, as: UTF8.self)
        } else {
            guard let valid = String(validating: bytes, as: UTF8.self) else { throw .malformedHeader }
            text = valid
        }
        return HeaderField(name: String(decoding: line[name], as: UTF8.self), value: text)
    }

    /// Where a field line's name and trimmed value are, and whether the value is plain ASCII.
    static func fieldRanges(_ line: UnsafeBufferPointer<UInt8>) throws(WireRefusal) -> (Range<Int>, Range<Int>, Bool) {
        if let first = line.first, ASCII.isWhitespace(first) { throw .obsoleteLineFolding }
        guard let colon = line.firstIndex(of: ASCII.colon), colon > 0, line[..<colon].allSatisfy(ASCII.isTokenChar) else {
            throw .malformedHeader
        }
        var from = colon + 1
        var to = line.count
        while from < to, ASCII.isWhitespace(line[from]) { from += 1 }
        while to > from, ASCII.isWhitespace(line[to - 1]) { to -= 1 }
        var ascii = true
        for b in line[from..<to] {
            guard ASCII.isFieldValueByte(b) else { throw .malformedHeader }
            if b >= 0x80 { ascii = false }
        }
        return (0..<colon, from..<to, ascii)
    }
}

extension HeadParser {
    /// The fields' meaning: framing, Host, Expect, Connection.
    func head(method: String, target: String, minor: Int, headers: [HeaderField]) throws(WireRefusal) -> RequestHead {
        var lengths: [String] = []
        var encodings: [String] = []
        var hosts: [String] = []
        var expectations: [String] = []
        var connection: [String] = []
        for field in headers {
            let name = field.name
            if ASCII.sameIgnoringCase(name, "Content-Length") {
                lengths.append(field.value)
            } else if ASCII.sameIgnoringCase(name, "Transfer-Encoding") {
                encodings.append(field.value)
            } else if ASCII.sameIgnoringCase(name, "Host") {
                hosts.append(field.value)
            } else if ASCII.sameIgnoringCase(name, "Expect") {
                expectations.append(field.value)
            } else if ASCII.sameIgnoringCase(name, "Connection") {
                connection.append(field.value)
            } else if name.utf8.contains(UInt8(ascii: "_")) {
                let dashed = String(decoding: name.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
                if ["Content-Length", "Transfer-Encoding", "Host"].contains(where: { ASCII.sameIgnoringCase(dashed, $0) }) {
                    throw .lookalikeHeaderName
                }
            }
        }
        let framing = try framing(lengths: lengths, encodings: encodings, minor: minor)
        if method == "CONNECT", framing != .none, framing != .length(0) { throw .connectWithBody }
        if hosts.count > 1 { throw .multipleHosts }
        if minor == 1, hosts.isEmpty { throw .missingHost }
        if let host = hosts.first, !host.isEmpty, !Self.isAuthority(Array(host.utf8), portRequired: false) { throw .invalidHost }
        for value in expectations {
            guard ASCII.elements(value).allSatisfy({ ASCII.same($0, ignoringCase: "100-continue") }) else {
                throw .unsupportedExpectation
            }
        }
        let options = connection.flatMap(ASCII.elements)
        let close = options.contains { ASCII.same($0, ignoringCase: "close") }
        let keepAlive = minor == 1 ? !close : !close && options.contains { ASCII.same($0, ignoringCase: "keep-alive") }
        return RequestHead(method: method, target: target, minorVersion: minor, headers: headers, framing: framing,
                           expectsContinue: minor == 1 && !expectations.isEmpty, keepAlive: keepAlive)
    }

    /// Content-Length and Transfer-Encoding read strictly (RFC 9112 §6).
    func framing(lengths: [String], encodings: [String], minor: Int) throws(WireRefusal) -> BodyFraming {
        if !encodings.isEmpty {
            if !lengths.isEmpty { throw .lengthAndChunked }
            if minor == 0 { throw .transferEncodingInHTTP10 }
            let codings = encodings.flatMap(ASCII.elements)
            guard codings.count == 1, ASCII.same(codings[0], ignoringCase: "chunked") else { throw .unsupportedTransferEncoding }
            return .chunked
        }
        var length: Int?
        for element in lengths.flatMap(ASCII.elements) {
            guard !element.isEmpty, element.allSatisfy(ASCII.isDigit) else { throw .invalidContentLength }
            var n = 0
            for digit in element {
                let (times10, o1) = n.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
                if o1 || o2 { throw .invalidContentLength }
                n = sum
            }
            if let length, length != n { throw .differingContentLengths }
            length = n
        }
        guard let length else { return .none }
        if length > limits.maxBodyBytes { throw .bodyTooLarge }
        return .length(length)
    }
}
