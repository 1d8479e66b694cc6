#!/usr/bin/env python3
"""Recompute, without Rust, the values that crates/stats/src/random.rs pins for SeededRng.

Usage: python3 scripts/seeded_stream_reference.py   (standard library only)

It implements the documented algorithms from their descriptions, not from the Rust crates:
- the seed expansion of rand_core 0.9 `SeedableRng::seed_from_u64`: a PCG32 (XSH RR) stream
  (M. O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms for
  Random Number Generation", 2014) whose 32-bit outputs, little-endian, fill the 32-byte key;
- ChaCha with 8 rounds (D. J. Bernstein, "ChaCha, a variant of Salsa20", 2008), a 64-bit block
  counter and a zero nonce, as rand_chacha's ChaCha8Rng; `next_u64` takes two 32-bit words,
  the first as the low half;
- Lemire's unbiased bounded draw (ACM TOMACS 29(1), 2019) and Fisher-Yates from the last
  position down (Knuth, TAOCP vol. 2, sec. 3.4.2, algorithm P).

The output must equal the PINNED_* constants of the test `the_stream_is_pinned`.
"""

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def seed_from_u64(seed):
    mul, inc = 6364136223846793005, 11634580027462260723
    state, key = seed, b""
    for _ in range(8):
        state = (state * mul + inc) & MASK64
        xorshifted = (((state >> 18) ^ state) >> 27) & MASK32
        rot = state >> 59
        out = ((xorshifted >> rot) | (xorshifted << ((32 - rot) & 31))) & MASK32
        key += out.to_bytes(4, "little")
    return key


def rotl(v, c):
    return ((v << c) | (v >> (32 - c))) & MASK32


def quarter_round(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK32
    s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK32
    s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK32
    s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK32
    s[b] = rotl(s[b] ^ s[c], 7)


def chacha8_block(key, counter):
    words = [int.from_bytes(key[i : i + 4], "little") for i in range(0, 32, 4)]
    init = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574] + words
    init += [counter & MASK32, counter >> 32, 0, 0]
    s = init[:]
    for _ in range(4):  # 8 rounds: 4 double rounds
        quarter_round(s, 0, 4, 8, 12)
        quarter_round(s, 1, 5, 9, 13)
        quarter_round(s, 2, 6, 10, 14)
        quarter_round(s, 3, 7, 11, 15)
        quarter_round(s, 0, 5, 10, 15)
        quarter_round(s, 1, 6, 11, 12)
        quarter_round(s, 2, 7, 8, 13)
        quarter_round(s, 3, 4, 9, 14)
    return [(a + b) & MASK32 for a, b in zip(s, init)]


class SeededRng:
    def __init__(self, seed):
        self.key, self.counter, self.words = seed_from_u64(seed), 0, []

    def next_u32(self):
        if not self.words:
            self.words = chacha8_block(self.key, self.counter)
            self.counter += 1
        return self.words.pop(0)

    def next_u64(self):
        low = self.next_u32()
        return low | (self.next_u32() << 32)

    def index(self, n):
        threshold = ((1 << 64) - n) % n
        while True:
            product = self.next_u64() * n
            if product & MASK64 >= threshold:
                return product >> 64

    def shuffle(self, items):
        for i in range(len(items) - 1, 0, -1):
            j = self.index(i + 1)
            items[i], items[j] = items[j], items[i]


if __name__ == "__main__":
    rng = SeededRng(0)
    print("PINNED_STREAM", [rng.next_u64() for _ in range(3)])
    rng = SeededRng(42)
    print("PINNED_DRAWS", [rng.index(10) for _ in range(8)])
    rng = SeededRng(20_261_123)
    order = list(range(10))
    rng.shuffle(order)
    print("PINNED_SHUFFLE", order)
