import ArgumentParser
import Foundation
import ShopAPI
import ShopProbes
import ShopViewModels
import TerminalText

/// `reiterate-shop contract`: the contract as the watchdog reads it from its document (the built-in
/// copy, or `--contract FILE`), as JSON — what a test compares with the YAML as Python reads it.
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Print the operations and schemas the contract watchdog checks responses against (JSON)."
    )

    @Option(name: .long, help: ArgumentHelp("Read another version of the OpenAPI document instead of the built-in one.", valueName: "file"))
    var contract: String?

    struct Dump: Encodable {
        var source: String
        var operations: [ContractOperation]
        var error: ContractSchema?
    }

    func run() throws {
        var loaded = Contract.builtIn()
        if let contract {
            do {
                loaded = try ContractLoader.load(file: contract, cacheDirectory: nil)
            } catch {
                Terminal.err("error: \(Sanitizer.line(error.description))\n")
                throw ExitCode(ExitStatus.config.rawValue)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Dump(source: loaded.source, operations: loaded.operations, error: loaded.error))
        Terminal.out(String(decoding: data, as: UTF8.self) + "\n")
    }
}
