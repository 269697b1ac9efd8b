/// JSON text rewritten token by token, never failing: what the tokenizer cannot read is copied as it
/// came.
public enum JSONText {
    /// `bytes` with the string value of every key that `isSecret` names replaced by `"placeholder"`.
    /// Works on invalid or cut JSON too; a cut string after a secret key is replaced to its end.
    public static func replacingValues(_ bytes: [UInt8], tokens: [JSONToken], placeholder: String, isSecret: (String) -> Bool) -> [UInt8] {
        var out: [UInt8]?
        var copied = 0
        bytes.withUnsafeBufferPointer { b in
            var k = 2
            while k < tokens.count {
                defer { k += 1 }
                let value = tokens[k]
                guard value.kind == .string, tokens[k - 1].kind == .colon, tokens[k - 2].kind == .string else { continue }
                let key = tokens[k - 2]
                let name = JSONString.decode(b, key) ?? String(decoding: UnsafeBufferPointer(rebasing: b[key.contentRange]), as: UTF8.self)
                guard isSecret(name) else { continue }
                if out == nil { out = []; out?.reserveCapacity(bytes.count) }
                out?.append(contentsOf: b[copied..<value.start])
                out?.append(contentsOf: "\"\(placeholder)\"".utf8)
                copied = value.end
            }
        }
        guard var out else { return bytes }
        out.append(contentsOf: bytes[copied...])
        return out
    }

    /// `\uD800`–`\uDFFF` escapes that do not form a surrogate pair become `\uFFFD`, so a decoder that
    /// refuses them costs one field (shown as �), not the whole page. The same bytes when there is none.
    public static func replacingLoneSurrogates(_ bytes: [UInt8], tokens: [JSONToken]) -> [UInt8] {
        var out: [UInt8]?
        var copied = 0
        bytes.withUnsafeBufferPointer { b in
            for t in tokens where t.kind == .string && t.escaped {
                var i = t.start + 1
                while i < t.end {
                    guard b[i] == UInt8(ascii: "\\") else { i += 1; continue }
                    guard i + 1 < t.end, b[i + 1] == UInt8(ascii: "u"), let unit = JSONString.hex4(b, i + 2, t.end), (0xD800..<0xE000).contains(unit) else {
                        i += 2
                        continue
                    }
                    if unit < 0xDC00, i + 7 < t.end, b[i + 6] == UInt8(ascii: "\\"), b[i + 7] == UInt8(ascii: "u"),
                       let low = JSONString.hex4(b, i + 8, t.end), (0xDC00..<0xE000).contains(low) {
                        i += 12  // a proper pair
                        continue
                    }
                    if out == nil { out = []; out?.reserveCapacity(bytes.count) }
                    out?.append(contentsOf: b[copied..<i])
                    out?.append(contentsOf: "\\ufffd".utf8)
                    i += 6
                    copied = i
                }
            }
        }
        guard var out else { return bytes }
        out.append(contentsOf: bytes[copied...])
        return out
    }

    /// Re-indented for reading, key order kept; cut or invalid JSON is indented as far as it goes.
    public static func pretty(_ bytes: [UInt8], tokens: [JSONToken], indent: String = "  ") -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 2)
        var depth = 0
        var pendingNewline = false
        let step = Array(indent.utf8)
        func newline() {
            out.append(0x0A)
            for _ in 0..<max(depth, 0) { out.append(contentsOf: step) }
        }
        for t in tokens {
            if pendingNewline, t.kind != .endObject, t.kind != .endArray { newline() }
            pendingNewline = false
            switch t.kind {
            case .beginObject, .beginArray:
                out.append(bytes[t.start])
                depth += 1
                pendingNewline = true
            case .endObject, .endArray:
                depth -= 1
                if let last = out.last, last != UInt8(ascii: "{"), last != UInt8(ascii: "[") { newline() }
                out.append(bytes[t.start])
            case .comma:
                out.append(UInt8(ascii: ","))
                newline()
            case .colon:
                out.append(contentsOf: [UInt8(ascii: ":"), 0x20])
            case .string, .number, .literalTrue, .literalFalse, .literalNull, .invalid:
                out.append(contentsOf: bytes[t.range])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
