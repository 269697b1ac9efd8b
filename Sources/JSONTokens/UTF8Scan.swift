/// Where a run of bytes stops being UTF-8: the offsets of the bytes that do not begin a well-formed
/// sequence (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
public enum UTF8Scan {
    /// The offset (within `bytes`) of the first byte that is not part of well-formed UTF-8; nil when all is.
    public static func firstInvalid<C: Collection>(_ bytes: C) -> Int? where C.Element == UInt8, C.Index == Int {
        invalid(bytes, limit: 1).first.map { $0 - bytes.startIndex }
    }

    /// The indexes of the bytes that do not begin (or continue) a well-formed sequence, at most `limit`.
    public static func invalid<C: Collection>(_ bytes: C, limit: Int = .max) -> [Int] where C.Element == UInt8, C.Index == Int {
        var out: [Int] = []
        var i = bytes.startIndex
        let end = bytes.endIndex
        func cont(_ k: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool { k < end && range.contains(bytes[k]) }
        while i < end, out.count < limit {
            let b = bytes[i]
            let length: Int
            switch b {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = cont(i + 1) ? 2 : 0
            case 0xE0: length = cont(i + 1, 0xA0...0xBF) && cont(i + 2) ? 3 : 0
            case 0xE1...0xEC, 0xEE...0xEF: length = cont(i + 1) && cont(i + 2) ? 3 : 0
            case 0xED: length = cont(i + 1, 0x80...0x9F) && cont(i + 2) ? 3 : 0
            case 0xF0: length = cont(i + 1, 0x90...0xBF) && cont(i + 2) && cont(i + 3) ? 4 : 0
            case 0xF1...0xF3: length = cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0
            case 0xF4: length = cont(i + 1, 0x80...0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0
            default: length = 0
            }
            if length == 0 {
                out.append(i)
                i += 1
            } else {
                i += length
            }
        }
        return out
    }
}
