import MergeCore
import Randomness
import Testing

/// Fuzz of the decoder: random and mutated inputs must decode or throw a `DecodeError`, never
/// trap or hang. Whatever decodes must re-encode to bytes that decode to the same changeset.
@Suite("Codec fuzz")
struct CodecFuzzTests {
    /// Decodes `bytes`; if that succeeds, checks the re-encoding round trip. Returns whether the
    /// input decoded.
    @discardableResult
    func decodeOrThrow(_ bytes: [UInt8]) -> Bool {
        do {
            let changeset = try Changeset(decoding: bytes)
            let again = try Changeset(decoding: changeset.encoded())
            #expect(again == changeset)
            return true
        } catch {
            #expect(error.code >= 1 && error.code <= 17)
            #expect(error.offset >= 0 && error.offset <= bytes.count)
            return false
        }
    }

    @Test("5,000 random byte strings")
    func randomBytes() {
        let random = RandomStream(seed: 21, id: StreamID(domain: 0xF022, index: 1))
        var decodedCount = 0
        for round in 0..<5_000 {
            let length = Int(random.uniformInt(below: 64))
            var bytes = (0..<length).map { _ in UInt8(random.uniformInt(below: 256)) }
            // Half of the inputs start with a plausible header, so the fuzz reaches instructions.
            if round % 2 == 0 { bytes = [1, 0, 0, 0, 0, UInt8(random.uniformInt(below: 8))] + bytes }
            if decodeOrThrow(bytes) { decodedCount += 1 }
        }
        #expect(decodedCount > 0)
    }

    @Test("10,000 mutations of valid encodings: bit flips, truncations, insertions, deletions")
    func mutatedEncodings() {
        let random = RandomStream(seed: 22, id: StreamID(domain: 0xF022, index: 2))
        var outcomes = [0, 0]
        for _ in 0..<2_000 {
            let valid = CodecSamples.randomChangeset(random).encoded()
            for _ in 0..<5 {
                let mutated = Self.mutate(valid, random)
                outcomes[decodeOrThrow(mutated) ? 1 : 0] += 1
            }
        }
        // Both outcomes occur: the fuzz is neither all-reject nor all-accept.
        #expect(outcomes[0] > 1_000)
        #expect(outcomes[1] > 100)
    }

    @Test("every truncation of a valid encoding throws")
    func everyTruncation() {
        let random = RandomStream(seed: 23, id: StreamID(domain: 0xF022, index: 3))
        for _ in 0..<50 {
            let valid = CodecSamples.randomChangeset(random).encoded()
            for length in 0..<valid.count {
                #expect(!decodeOrThrow(Array(valid[..<length])))
            }
        }
    }

    @Test("1,000 mutated batches")
    func mutatedBatches() {
        let random = RandomStream(seed: 24, id: StreamID(domain: 0xF022, index: 4))
        for _ in 0..<1_000 {
            let changesets = (0..<3).map { _ in CodecSamples.randomChangeset(random) }
            let mutated = Self.mutate(Changeset.encodeBatch(changesets), random)
            do {
                _ = try Changeset.decodeBatch(mutated)
            } catch {
                #expect(error.code >= 1 && error.code <= 17)
            }
        }
    }

    static func mutate(_ bytes: [UInt8], _ random: RandomStream) -> [UInt8] {
        var result = bytes
        let mutationCount = 1 + Int(random.uniformInt(below: 3))
        for _ in 0..<mutationCount {
            let position = Int(random.uniformInt(below: UInt64(result.count + 1)))
            switch random.uniformInt(below: 5) {
            case 0 where position < result.count:
                result[position] ^= UInt8(1) << UInt8(random.uniformInt(below: 8))
            case 1:
                result.removeSubrange(position...)
            case 2:
                result.insert(UInt8(random.uniformInt(below: 256)), at: position)
            case 3 where position < result.count:
                result.remove(at: position)
            default:
                if position < result.count { result[position] = UInt8(random.uniformInt(below: 256)) }
            }
        }
        return result
    }
}
