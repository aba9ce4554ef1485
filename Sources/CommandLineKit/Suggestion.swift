/// "Did you mean …" suggestions by edit distance (optimal string alignment: a swap of two
/// neighbouring letters counts as one edit).
public enum Suggestion {
    /// The closest candidate to `input`, if it is close enough to be a plausible typo.
    public static func closest(to input: String, among candidates: [String]) -> String? {
        let word = input.lowercased()
        guard !word.isEmpty else { return nil }
        // Two edits from five letters on (payed → paid), one below (so short words stay apart).
        let limit = max(1, min(3, (word.count + 1) / 3))
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            var distance = editDistance(word, candidate.lowercased())
            if distance > limit, word.count >= 3, candidate.lowercased().hasPrefix(word) {
                distance = limit
            }
            guard distance <= limit else { continue }
            if let current = best {
                // Ties go to the candidate sharing the longer prefix with the input (fsh → fish, not zsh).
                let better =
                    distance < current.distance
                    || (distance == current.distance
                        && commonPrefix(word, candidate.lowercased())
                            > commonPrefix(word, current.candidate.lowercased()))
                if better { best = (candidate, distance) }
            } else {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    static func commonPrefix(_ a: String, _ b: String) -> Int {
        zip(a, b).prefix { $0 == $1 }.count
    }

    /// The number of insertions, deletions, substitutions and adjacent swaps from `a` to `b`.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let s = Array(a)
        let t = Array(b)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: t.count + 1), count: s.count + 1)
        for i in 0...s.count { d[i][0] = i }
        for j in 0...t.count { d[0][j] = j }
        for i in 1...s.count {
            for j in 1...t.count {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[s.count][t.count]
    }
}
