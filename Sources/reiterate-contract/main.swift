// `reiterate-contract FILE`: reads an OpenAPI document with OpenAPIKit and prints the contract the
// watchdog checks against, in the kept form (`ContractCache`). `reiterate-shop` runs it for a
// `--contract` document it has not read before; `make contract` runs it with `--built-in` to write the
// package's kept form. A document that cannot be used: one `error:` line, exit 78 (EX_CONFIG).
import ContractReader
import Foundation
import ShopAPI
import TerminalText

let arguments = Array(CommandLine.arguments.dropFirst().drop { $0 == "--" })
do {
    switch arguments.first {
    case "--built-in"?:
        FileHandle.standardOutput.write(Data(try ContractDocument.builtIn().keptForm(document: Contract.builtInText).utf8))
    case let file? where arguments.count == 1:
        let text = try ContractDocument.text(of: file)
        let contract = try ContractDocument.read(text, source: file)
        FileHandle.standardOutput.write(Data(contract.keptForm(document: text).utf8))
    default:
        FileHandle.standardError.write(Data("usage: reiterate-contract FILE | --built-in\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(Sanitizer.line(String(describing: error)))\n".utf8))
    exit(78)
}
