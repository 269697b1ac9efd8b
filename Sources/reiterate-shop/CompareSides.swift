import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopSettings
import ShopProbes
import ShopViewModels
import Synchronization
import TerminalText

extension CompareSide {
    /// A side as a command line gives it: its form, and a file that exists.
    static func given(_ text: String) throws -> CompareSide {
        let side: CompareSide
        do { side = try CompareSide.parse(text) } catch { throw CLIError(message: error.description, exitCode: .usage) }
        return try side.existing()
    }

    /// This side, when it is not a file that is missing.
    func existing() throws -> CompareSide {
        if case let .file(path) = self, !FileManager.default.fileExists(atPath: path) {
            throw CLIError(message: "“\(path)” is neither env:NAME, user:ID, env:NAME/user:ID nor a file that exists", exitCode: .usage)
        }
        return self
    }
}

extension FileSide {
    /// A file side as the commands open it: its failure as the command's, its note on cut answers told.
    static func opened(_ path: String) throws -> FileSide {
        do {
            let side = try FileSide(path: path)
            if let note = side.cutNote { Terminal.err(note) }
            return side
        } catch let .cannotRead(words) {
            throw CLIError(message: words, exitCode: .config)
        } catch let .notASnapshot(words) {
            throw CLIError(message: words, exitCode: .dataError)
        }
    }
}
