import ArchivistBase
import Foundation
import Synchronization

/// How characters outside ASCII take part in words, folded once each and remembered.
enum ScalarFolding {
    enum Kind: Sendable {
        case word(String)
        case apostrophe
        case separator
    }

    private static let cache = Mutex<[UInt32: Kind]>([:])

    /// The scalars of Latin-1 and Latin Extended-A and B, and of the general punctuation block:
    /// the ones news text is made of, folded at first use (under a millisecond) and then read
    /// without a lock; the others go through the shared cache.
    private static let latin: [Kind] = (0..<UInt32(0x250)).map { Unicode.Scalar($0).map(classify) ?? .separator }
    private static let punctuation: [Kind] = (UInt32(0x2000)..<0x2070).map { Unicode.Scalar($0).map(classify) ?? .separator }

    static func fold(_ scalar: Unicode.Scalar) -> Kind {
        if scalar.value < 0x250 { return latin[Int(scalar.value)] }
        if (0x2000..<0x2070).contains(scalar.value) { return punctuation[Int(scalar.value - 0x2000)] }
        if let known = cache.withLock({ $0[scalar.value] }) { return known }
        let kind = classify(scalar)
        cache.withLock { $0[scalar.value] = kind }
        return kind
    }

    private static func classify(_ scalar: Unicode.Scalar) -> Kind {
        let kind: Kind
        if scalar == "\u{2019}" || scalar == "\u{02BC}" {
            kind = .apostrophe
        } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
            let folded = String(Character(scalar)).folding(
                options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            kind = folded.isEmpty ? .separator : .word(folded)
        } else if scalar.properties.generalCategory == .nonspacingMark {
            kind = .word("")
        } else {
            kind = .separator
        }
        return kind
    }
}
