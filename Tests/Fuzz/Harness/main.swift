// nativeauth-fuzz: libFuzzer targets for every document the library reads (README.md, "Tests"; Tests/Fuzz/README.md).
//
// Built normally (`swift build`), it replays corpora — `make test` runs it over the committed ones:
//   nativeauth-fuzz [--corpus DIR]            every file of every target's corpus (DIR/<target>/; default
//                                             Tests/Fuzz/corpus)
//   nativeauth-fuzz <target> FILE|DIR…        the given inputs on one target (to reproduce a crash)
//   nativeauth-fuzz seed --ready-file F --out DIR
//                                             records seeds from a running emulator (Seeds.swift; make fuzz-seeds)
// Built with `-sanitize=fuzzer,address -DFUZZING` (make fuzz), it is libFuzzer:
//   nativeauth-fuzz <target> [libFuzzer options] [CORPUS_DIR…]   ($NATIVEAUTH_FUZZ_TARGET names the target when the
//                                                               first argument does not; fork mode's children need it)
// SwiftPM gives every executable its own entry point, so this program keeps its main and hands over to libFuzzer's
// driver (LLVMFuzzerRunDriver); LLVMFuzzerTestOneInput exists for the linker's sake and runs the same target.
import Glibc

#if FUZZING
import CLibFuzzer

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { runSelected(data, size) }

func fuzz(_ arguments: [String]) -> Never {
    var args = arguments
    if args.count > 1, let t = fuzzTarget(named: args[1]) {
        args.remove(at: 1)
        setenv("NATIVEAUTH_FUZZ_TARGET", t.name, 1)
    }
    guard let name = getenv("NATIVEAUTH_FUZZ_TARGET").map({ String(cString: $0) }), let target = fuzzTarget(named: name)
    else {
        printError("usage: nativeauth-fuzz <target> [libFuzzer options] [corpus…]; targets:")
        for t in fuzzTargets { printError("  \(t.name)  \(t.about)") }
        exit(2)
    }
    selectedTarget = target
    var argc = Int32(args.count)
    var cArgs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
    let rc = cArgs.withUnsafeMutableBufferPointer { p -> Int32 in
        var argv = p.baseAddress
        return LLVMFuzzerRunDriver(&argc, &argv) { data, size in runSelected(data, size) }
    }
    exit(rc)
}

fuzz(CommandLine.arguments)
#else

/// Runs every input file of `paths` (files, or directories of files) on `target`; returns how many ran.
func replay(_ target: FuzzTarget, _ paths: [String], verbose: Bool) -> Int {
    var count = 0
    for path in paths {
        for file in Files.isDirectory(path) ? Files.list(path) : [path] {
            guard let bytes = Files.read(file) else {
                printError("nativeauth-fuzz: cannot read \(file)")
                exit(1)
            }
            if verbose { printError("\(target.name) \(file)") }
            bytes.withUnsafeBytes { run(target, $0) }
            count += 1
        }
    }
    return count
}

func main(_ arguments: [String]) -> Int32 {
    var args = Array(arguments.dropFirst())
    let verbose = args.contains("-v")
    args.removeAll { $0 == "-v" }
    if args.first == "seed" { return recordSeeds(Array(args.dropFirst())) }
    if let name = args.first, let target = fuzzTarget(named: name) {
        guard args.count > 1 else {
            printError("usage: nativeauth-fuzz \(name) FILE|DIR…")
            return 2
        }
        let n = replay(target, Array(args.dropFirst()), verbose: verbose)
        print("\(name): \(n) input(s), no finding")
        return 0
    }
    var corpus = Files.directory(of: Files.directory(of: #filePath)) + "/corpus"
    if args.count == 2 && args[0] == "--corpus" {
        corpus = args[1]
    } else if !args.isEmpty {
        printError("usage: nativeauth-fuzz [-v] [--corpus DIR] | <target> FILE|DIR… | seed …")
        printError("targets: \(fuzzTargets.map(\.name).joined(separator: ", "))")
        return 2
    }
    var total = 0
    for target in fuzzTargets {
        let dir = corpus + "/" + target.name
        guard Files.isDirectory(dir) else {
            printError("nativeauth-fuzz: no corpus at \(dir)")
            return 1
        }
        let n = replay(target, [dir], verbose: verbose)
        print("replay \(target.name): \(n) input(s)")
        total += n
    }
    print("replay: \(total) input(s) of \(fuzzTargets.count) targets, no finding")
    return 0
}

exit(main(CommandLine.arguments))
#endif
