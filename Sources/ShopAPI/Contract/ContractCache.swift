import Foundation
import JSONTokens

/// The contract as the watchdog reads it, kept on disk by the hash of its document: reading the
/// document with OpenAPIKit takes about 60 ms of a release build's CPU (most of it the first use of
/// Codable's generic machinery), which a one-shot `print balance` would pay on every run. The file is
/// the watchdog's own reduced form (what `reiterate-shop contract` prints), read back by the project's
/// JSON parser with no Codable; a file that does not read is ignored and written anew.
enum ContractCache {
    /// 3: operations carry their parameters and request body; 4: and whether they take a token.
    static let formatVersion = 4

    /// The document's text's hash (FNV-1a, 64 bits, in hex): what a kept contract was read from.
    static func hash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    static func path(for text: String, in directory: String) -> String {
        directory + "/contract-v\(formatVersion)-" + hash(text) + ".json"
    }

    static func read(_ file: String, source: String) -> Contract? {
        FileManager.default.contents(atPath: file).flatMap { read(bytes: Array($0), source: source, document: nil) }
    }

    /// The contract kept in `bytes`, when it was read from the document whose hash is `document` (any, when nil).
    static func read(bytes: [UInt8], source: String, document: String?) -> Contract? {
        guard case let .object(root)? = JSONValue.parse(bytes), case .int(formatVersion)? = root["format"],
              case let .array(ops)? = root["operations"] else { return nil }
        if let document { guard case .string(document)? = root["document"] else { return nil } }
        var operations: [ContractOperation] = []
        for op in ops {
            guard case let .object(o) = op, case let .string(id)? = o["operationId"], case let .string(method)? = o["method"],
                  case let .string(path)? = o["path"], case let .array(rs)? = o["responses"], case let .bool(requiresAuth)? = o["requiresAuth"]
            else { return nil }
            var responses: [ContractResponse] = []
            for r in rs {
                guard case let .object(f) = r, case let .string(status)? = f["status"], case let .array(types)? = f["contentTypes"] else { return nil }
                let schema = f["schema"].flatMap(self.schema)
                if f["schema"] != nil, schema == nil { return nil }
                responses.append(ContractResponse(status: status, contentTypes: strings(types), schema: schema))
            }
            guard let parameters = parameters(o["parameters"]) else { return nil }
            var body: ContractRequestBody?
            if let value = o["requestBody"] {
                guard let read = requestBody(value) else { return nil }
                body = read
            }
            operations.append(ContractOperation(operationId: id, method: method, path: path, parameters: parameters, requestBody: body,
                                                responses: responses, requiresAuth: requiresAuth))
        }
        return Contract(operations: operations, error: root["error"].flatMap(schema), source: source)
    }

    /// An operation's parameters ([] when it lists none); nil when one does not read.
    static func parameters(_ value: JSONValue?) -> [ContractParameter]? {
        guard let value else { return [] }
        guard case let .array(list) = value else { return nil }
        var out: [ContractParameter] = []
        for item in list {
            guard case let .object(f) = item, case let .string(name)? = f["name"], case let .string(place)? = f["in"],
                  let location = ContractParameter.Location(rawValue: place), case let .bool(required)? = f["required"] else { return nil }
            let schema = f["schema"].flatMap(self.schema)
            if f["schema"] != nil, schema == nil { return nil }
            out.append(ContractParameter(name: name, location: location, required: required, schema: schema))
        }
        return out
    }

    static func requestBody(_ value: JSONValue) -> ContractRequestBody? {
        guard case let .object(f) = value, case let .bool(required)? = f["required"], case let .array(types)? = f["contentTypes"] else { return nil }
        let schema = f["schema"].flatMap(self.schema)
        if f["schema"] != nil, schema == nil { return nil }
        return ContractRequestBody(required: required, contentTypes: strings(types), schema: schema)
    }

    static func strings(_ list: [JSONValue]) -> [String] {
        list.compactMap { if case let .string(s) = $0 { return s } else { return nil } }
    }

    static func schema(_ value: JSONValue) -> ContractSchema? {
        guard case let .object(f) = value, case let .array(types)? = f["type"] else { return nil }
        func strings(_ key: String) -> [String]? {
            guard case let .array(a)? = f[key] else { return nil }
            return a.compactMap { if case let .string(s) = $0 { return s } else { return nil } }
        }
        func number(_ key: String) -> Double? {
            switch f[key] {
            case let .int(n)?: return Double(n)
            case let .double(d)?: return d
            default: return nil
            }
        }
        func int(_ key: String) -> Int? { if case let .int(n)? = f[key] { return n } else { return nil } }
        func bool(_ key: String) -> Bool? { if case let .bool(b)? = f[key] { return b } else { return nil } }
        var properties: [String: ContractSchema]?
        if case let .object(p)? = f["properties"] {
            var out: [String: ContractSchema] = [:]
            for (name, child) in p {
                guard let s = schema(child) else { return nil }
                out[name] = s
            }
            properties = out
        }
        var items: ContractSchema?
        if let i = f["items"] {
            guard let s = schema(i) else { return nil }
            items = s
        }
        var format: String?
        if case let .string(s)? = f["format"] { format = s }
        return ContractSchema(types.compactMap { if case let .string(t) = $0 { return t } else { return nil } }, required: strings("required"),
                              properties: properties, items: items, minimum: number("minimum"), maximum: number("maximum"),
                              exclusiveMinimum: bool("exclusiveMinimum"), exclusiveMaximum: bool("exclusiveMaximum"), minLength: int("minLength"), maxLength: int("maxLength"), format: format,
                              defaultNumber: number("default"))
    }

    /// `contract`, read from the document whose text is `text`, in the kept form.
    static func encode(_ contract: Contract, document text: String) -> Data? {
        struct File: Encodable {
            var format: Int
            var document: String
            var operations: [ContractOperation]
            var error: ContractSchema?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try? encoder.encode(File(format: formatVersion, document: hash(text), operations: contract.operations, error: contract.error))
    }

    /// Writes `contract` beside the others (best effort: a cache that cannot be written costs time, not checks).
    static func write(_ contract: Contract, document text: String, to file: String) {
        guard let data = encode(contract, document: text) else { return }
        let folder = (file as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try? data.write(to: URL(fileURLWithPath: file), options: .atomic)
        // As every file of the cache folder: 0600 (it holds nothing secret, but the folder is the user's alone).
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }
}
