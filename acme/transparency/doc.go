// SPDX-License-Identifier: Apache-2.0

// Package transparency is weir's verifiable log: an append-only Merkle tree
// of what the CA did (every certificate issued, every revocation, every
// administrator's action and configuration reload), whose signed
// checkpoints let anyone holding an earlier one prove that the history
// since only grew: an entry cut off, removed, inserted or rewritten, or a
// whole new tree, no longer matches the checkpoint they hold.
//
// The formats are the public ones, so that tools weir did not write can
// read and check the log:
//
//   - an entry (a leaf) is one JSON object of a fixed form (Entry): a
//     certificate issued, with its account, tenant, order and how each of
//     its names was validated; a revocation with its reason; or an
//     administrator's action or configuration reload. ParseEntry reads only
//     the bytes EncodeEntry writes, so a monitor that re-encodes what it
//     read gets the leaf the tree hashed;
//   - the tree and its proofs are RFC 9162's (§2.1: a leaf's hash is
//     SHA-256(0x00 || entry), a node's SHA-256(0x01 || left || right));
//   - a checkpoint is a C2SP tlog-checkpoint (origin line, tree size,
//     base64 root hash, optional extension lines) in a C2SP signed note,
//     signed with an Ed25519 key of the log's own, never the CA's
//     (NoteSigner, over any crypto.Signer: a key file or a PKCS#11 token);
//   - the log is served as C2SP tlog-tiles: hash tiles of height 8 at
//     tile/<L>/<N>[.p/<W>] and entry bundles at tile/entries/<N>[.p/<W>]
//     (TilePath, ParseTilePath, EntryBundle).
//
// The tree math is golang.org/x/mod/sumdb/tlog and the signed notes
// golang.org/x/mod/sumdb/note: the code Go's checksum database runs, whose
// tree hashing is RFC 9162's and whose tiles are the ones tlog-tiles took
// up (their paths name the height, which tlog-tiles fixes at 8). A log of
// weir's own Merkle code would be one more thing for its auditors to
// check.
//
// # A worked example
//
// Five entries e0 … e4: the leaves are h_i = SHA-256(0x00 || e_i). The tree
// of size 5 has root
//
//	SHA-256(0x01 || H(0..4) || h4), H(0..4) = SHA-256(0x01 || H(0..2) || H(2..4))
//
// and the stored hashes are the leaves and every complete subtree: level 0
// h0 … h4, level 1 H(0..2) and H(2..4), level 2 H(0..4), 8 hashes
// (tlog.StoredHashCount(5)). The tile tile/0/000.p/5 holds h0 … h4 (5 × 32
// bytes); tile/entries/000.p/5 holds e0 … e4, each after its length as a
// big-endian uint16. A monitor holding the checkpoint of size 3 asks for
// the proof that size 5 extends it (tlog.ProveTree(5, 3, …), RFC 9162
// §2.1.4): h2, h3, H(0..2) and h4, four hashes, from which it recomputes
// both its own root and the new one (TestWorkedExample).
package transparency
