/// The header fields a proxy never passes on: they describe one hop, not the request (RFC 9110 §7.6.1),
/// and the framing fields, which the proxy sets itself for the body it sends. Here, beside the reader, so
/// that the fuzz target checks what the proxy forwards with the proxy's own filter.
public enum HopByHop {
    public static let names: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "te", "trailer",
        "transfer-encoding", "upgrade", "expect", "content-length", "host",
    ]

    /// `fields` without the hop-by-hop ones, nor those `Connection` names (its list's items, without the
    /// optional whitespace, spaces and tabs, around them).
    public static func filtered(_ fields: [HeaderField]) -> [HeaderField] {
        let named = Set(fields.filter { $0.name.lowercased() == "connection" }
            .flatMap { $0.value.split(separator: ",").map { item in
                String(item.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()).lowercased()
            } })
        return fields.filter { field in
            let name = field.name.lowercased()
            return !names.contains(name) && !named.contains(name)
        }
    }
}
