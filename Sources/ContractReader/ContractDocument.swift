import Foundation
import ShopAPI
import OpenAPIKit
import Yams

/// Reads an OpenAPI 3.1 document (YAML or JSON) with OpenAPIKit and turns it into the `Contract` the
/// watchdog checks against: each operation's parameters, request body, statuses, media types and
/// response schemas, with every `$ref` resolved by the library. Only `reiterate-contract` links it (and the tests): the app runs
/// that reader for a `--contract` document it has not kept yet, so its own binary carries neither
/// OpenAPIKit nor Yams (their conformances cost every start, see docs/dependencies.md).
public enum ContractDocument {
    public typealias LoadError = ContractLoadError

    /// The built-in copy, read by OpenAPIKit (what `make contract` keeps in the package).
    public static func builtIn() throws(LoadError) -> Contract {
        try read(Contract.builtInText, source: "built in")
    }

    /// The contract in `file`.
    public static func load(file: String) throws(LoadError) -> Contract {
        try read(text(of: file), source: file)
    }

    /// The text of the document in `file`.
    public static func text(of file: String) throws(LoadError) -> String {
        do {
            return try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw LoadError(description: "cannot read the contract \(file): \((error as NSError).localizedFailureReason ?? "no such file, or not readable")")
        }
    }

    /// The contract in `text`; `source` names it in messages.
    public static func read(_ text: String, source: String) throws(LoadError) -> Contract {
        let document: OpenAPI.Document
        do {
            document = try YAMLDecoder().decode(OpenAPI.Document.self, from: text)
        } catch {
            throw LoadError(description: "the contract \(source) is not an OpenAPI 3.1 document: \(brief(error))")
        }
        let resolved: DereferencedDocument
        do {
            resolved = try document.locallyDereferenced()
        } catch {
            throw LoadError(description: "the contract \(source) has a reference that does not resolve: \(unresolved(error))")
        }
        var operations: [ContractOperation] = []
        for route in resolved.routes {
            for endpoint in route.pathItem.endpoints {
                guard let id = endpoint.operation.operationId else { continue }
                let responses = endpoint.operation.responses.map { status, response in
                    let json = response.content.first { $0.key.typeAndSubtype == "application/json" }?.value
                    return ContractResponse(status: status.rawValue, contentTypes: response.content.keys.map(\.typeAndSubtype),
                                            schema: json?.schema.map(schema))
                }
                let body = endpoint.operation.requestBody.map { body in
                    ContractRequestBody(required: body.required, contentTypes: body.content.keys.map(\.typeAndSubtype),
                                        schema: body.content.first { $0.key.typeAndSubtype == "application/json" }?.value.schema.map(schema))
                }
                operations.append(ContractOperation(operationId: id, method: endpoint.method.rawValue.uppercased(), path: route.path.rawValue,
                                                    parameters: parameters(route.pathItem.parameters, endpoint.operation.parameters),
                                                    requestBody: body, responses: responses,
                                                    requiresAuth: !(endpoint.operation.security.map { $0.isEmpty } ?? document.security.isEmpty)))
            }
        }
        let error = try? document.components.schemas[OpenAPI.ComponentKey(stringLiteral: "Error")]?
            .dereferenced(in: document.components)
        return Contract(operations: operations, error: error.map(schema), source: source)
    }

    /// An operation's parameters: the path item's, then its own; its own one of the same name and
    /// place replaces the path item's (as the OpenAPI specification says). A parameter given by a
    /// media type (`content`) instead of a schema has no schema here; a 3.2 `querystring` is left out.
    static func parameters(_ shared: [DereferencedParameter], _ own: [DereferencedParameter]) -> [ContractParameter] {
        var out: [ContractParameter] = []
        for parameter in shared + own {
            let location: ContractParameter.Location
            switch parameter.location {
            case .query: location = .query
            case .header: location = .header
            case .path: location = .path
            case .cookie: location = .cookie
            case .querystring: continue
            }
            // "If in is header and the name is Accept, Content-Type or Authorization, the definition is ignored."
            if location == .header, ["accept", "content-type", "authorization"].contains(parameter.name.lowercased()) { continue }
            let kept = ContractParameter(name: parameter.name, location: location, required: parameter.required,
                                         schema: parameter.schemaOrContent.a.map { schema($0.schema) })
            out.removeAll { $0.name == kept.name && $0.location == kept.location }
            out.append(kept)
        }
        return out
    }

    /// The parts of a schema the watchdog checks. `allOf`/`oneOf`/`anyOf`/`not` and schemas with no
    /// type check nothing (the contract uses none): any value passes them.
    static func schema(_ s: DereferencedJSONSchema) -> ContractSchema {
        let nullable: [String] = s.nullable ? ["null"] : []
        switch s {
        case .null: return ContractSchema(["null"])
        case .boolean: return ContractSchema(["boolean"] + nullable)
        case let .number(core, numeric):
            return ContractSchema(["number"] + nullable, minimum: numeric.minimum?.value, maximum: numeric.maximum?.value,
                                  exclusiveMinimum: numeric.minimum?.exclusive, exclusiveMaximum: numeric.maximum?.exclusive, format: format(core.formatString),
                                  defaultNumber: core.defaultValue.flatMap { ($0.value as? Double) ?? ($0.value as? Int).map(Double.init) })
        case let .integer(core, integer):
            return ContractSchema(["integer"] + nullable, minimum: integer.minimum.map { Double($0.value) },
                                  maximum: integer.maximum.map { Double($0.value) }, exclusiveMinimum: integer.minimum?.exclusive,
                                  exclusiveMaximum: integer.maximum?.exclusive, format: format(core.formatString),
                                  defaultNumber: core.defaultValue.flatMap { ($0.value as? Int).map(Double.init) ?? ($0.value as? Double) })
        case let .string(core, string):
            return ContractSchema(["string"] + nullable, minLength: string.minLength > 0 ? string.minLength : nil,
                                  maxLength: string.maxLength, format: format(core.formatString))
        case let .object(_, object):
            var properties: [String: ContractSchema] = [:]
            for (name, child) in object.properties { properties[name] = schema(child) }
            return ContractSchema(["object"] + nullable, required: object.requiredProperties.isEmpty ? nil : object.requiredProperties.sorted(),
                                  properties: properties)
        case let .array(_, array):
            return ContractSchema(["array"] + nullable, items: array.items.map(schema))
        case .all, .one, .any, .not, .fragment:
            return ContractSchema([])
        }
    }

    /// A schema's `format`, or nil for none (the library's "generic" format is "").
    static func format(_ raw: String?) -> String? { raw.flatMap { $0.isEmpty ? nil : $0 } }

    /// Why a `$ref` did not resolve, in our words.
    static func unresolved(_ error: any Error) -> String {
        switch error {
        case let OpenAPI.Components.ReferenceError.missingOnLookup(name, key), let OpenAPI.Components.ReferenceError.missingOnCreation(name, key):
            return "“\(name)” is not among the document's \(key)"
        case OpenAPI.Components.ReferenceError.cannotLookupRemoteReference:
            return "it points into another file (only references within the document are read)"
        case let cycle as OpenAPI.Components.ReferenceCycleError:
            return "the schema at \(cycle.ref) refers to itself"
        default:
            return brief(error)
        }
    }

    /// What went wrong, in one line of the library's plain wording (OpenAPIKit's own explanation of a
    /// decoding error; the YAML reader's first line), without type names; at most 200 characters.
    static func brief(_ error: any Error) -> String {
        var text: String
        if let yaml = error as? YamlError {
            text = "not valid YAML: " + (String(describing: yaml).split(separator: "\n").first.map(String.init) ?? "")
        } else if case let .dataCorrupted(context)? = error as? DecodingError, let yaml = context.underlyingError as? YamlError {
            text = "not valid YAML: " + (String(describing: yaml).split(separator: "\n").first.map(String.init) ?? "")
        } else {
            let explained = OpenAPI.Error(from: error)
            text = explained.localizedDescription
            if !explained.codingPathString.isEmpty, !text.contains(explained.codingPathString) { text += " (at \(explained.codingPathString))" }
        }
        text = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
