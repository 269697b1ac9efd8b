import Foundation

/// A fuzz target built without libFuzzer: it runs each file (or each file in each folder) it is given
/// through the target's check, so a crash input is replayed as a plain program (and kept as a test:
/// `make test` replays `Tests/Fuzz/corpus`).
public enum FuzzReplay {
    public static func run(_ check: ([UInt8]) -> Void) {
        var files: [String] = []
        for path in CommandLine.arguments.dropFirst() {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            if isFolder.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.sorted().map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            check(Array(data))
        }
        print("\(files.count) inputs replayed, 0 failed")
    }
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// libFuzzer's driver, started from the target's entry point (SwiftPM names an executable's entry
/// `<module>_main` and links `main` to it, so libFuzzer's own `main` is not used).
public enum FuzzDriver {
    public static func run(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                           _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32 {
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv, callback)
    }

    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    }
}
#endif
