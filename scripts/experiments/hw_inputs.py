"""Deterministic inputs shaped like SPEC CPU2006's reference inputs, for the
hardware comparison (`scripts/experiments/hw_compare.sh`).

Every file comes from one seeded generator, so the same bytes are written on
every machine. What each imitates:

- ``bzip2-in.bin`` (20 MB): SPEC's 401.bzip2 compresses a source tarball, two
  JPEGs, a program binary and an HTML page held in memory. Here: 8 MB of C-like
  source, 4 MB of incompressible bytes (the JPEGs), 4 MB of fixed-layout
  records with small integers (the binary), 4 MB of HTML.
- ``gcc-in.c``: SPEC's 403.gcc compiles large preprocessed sources (166.i,
  200.i, expr.i, ...) with -O3: hundreds of functions, some of them very
  large, with switches, loops over arrays of structs and many locals.
- ``perl-in.pl``: SPEC's 400.perlbench runs a SpamAssassin-style mail filter
  (checkspam) and mail splitting: regular expressions over generated mails,
  hashes of tokens, sorting.
- ``hmmer-db.fa`` and ``hmmer-aln.sto``: SPEC's 456.hmmer searches a profile
  HMM against a protein database (nph3.hmm against swiss41).
- ``gnugo.gtp``: SPEC's 445.gobmk runs GNU Go on GTP test files: loaded
  positions and genmove.
- ``xalan-in.xml`` and ``xalan.xsl``: SPEC's 483.xalancbmk transforms a large
  XML document with an XSL stylesheet (t5.xml, xalanc.xsl).

Usage: python3 hw_inputs.py OUTDIR
       python3 hw_inputs.py --large OUTDIR   (the footprint ablations' inputs:
       ``perl-large.pl``, ``perl-mails.pl``, ``perl-vocab.pl``, ``xalan-large.xml``)
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

SEED = 20261126
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def c_source(r: random.Random, size: int) -> str:
    """C-like text (for bzip2's source-tarball part)."""
    idents = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(r.randint(3, 12))) for _ in range(3000)]
    out: list[str] = []
    n = 0
    while n < size:
        f = r.choice(idents)
        body = []
        for _ in range(r.randint(3, 30)):
            a, b, c = (r.choice(idents) for _ in range(3))
            kind = r.random()
            if kind < 0.4:
                body.append(f"    {a} = {b} + {c} * {r.randint(0, 999)};")
            elif kind < 0.7:
                body.append(f"    if ({a} > {b}) {{ {c}({a}, {r.randint(0, 99)}); }}")
            else:
                body.append(f"    for (i = 0; i < {r.randint(2, 512)}; i++) {a}[i] ^= {b}[i];")
        text = f"static int {f}(int {r.choice(idents)}, char *{r.choice(idents)})\n{{\n" + "\n".join(body) + "\n    return 0;\n}\n\n"
        out.append(text)
        n += len(text)
    return "".join(out)[:size]


def html(r: random.Random, size: int) -> str:
    words = ["".join(r.choice("etaoinshrdlucmfwypvbgkjqxz") for _ in range(r.randint(2, 9))) for _ in range(8000)]
    out: list[str] = ["<html><body>\n"]
    n = 0
    while n < size:
        tag = r.choice(["p", "li", "td", "h2", "a"])
        line = f"<{tag} class=\"c{r.randint(0, 40)}\">" + " ".join(words[int(len(words) * r.random() ** 2)] for _ in range(r.randint(5, 25))) + f"</{tag}>\n"
        out.append(line)
        n += len(line)
    return "".join(out)[:size]


def bzip2_input(r: random.Random) -> bytes:
    src = c_source(r, 8_000_000).encode()
    jpeg = r.randbytes(4_000_000)
    recs = bytearray()
    while len(recs) < 4_000_000:
        recs += bytes([0x48, 0x89, r.randint(0, 15), r.randint(0, 3), 0, 0, r.randint(0, 255), 0])
    page = html(r, 4_000_000).encode()
    return src + jpeg + bytes(recs[:4_000_000]) + page


def gcc_input(r: random.Random) -> str:
    """About 1.6 MB of C: 600 functions, a tenth of them large."""
    out = ["struct rec { int a, b, c; long d; double e; struct rec *next; };\n",
           "extern int ext(int, int);\nextern struct rec pool[4096];\n"]
    for i in range(600):
        big = i % 10 == 0
        nlocals = 40 if big else 8
        out.append(f"int f{i}(int x, int y, struct rec *p)\n{{\n")
        out.append("".join(f"  int v{j} = x * {r.randint(1, 97)} + y;\n" for j in range(nlocals)))
        for k in range(r.randint(150, 400) if big else r.randint(8, 30)):
            a, b = r.randrange(nlocals), r.randrange(nlocals)
            kind = r.random()
            if kind < 0.3:
                out.append(f"  v{a} = v{b} * {r.randint(2, 31)} + (v{a} >> {r.randint(1, 5)});\n")
            elif kind < 0.5:
                out.append(f"  for (int i = 0; i < {r.randint(4, 256)}; i++) {{ pool[(i + v{a}) & 4095].a += v{b} + i; v{b} ^= pool[i & 4095].b; }}\n")
            elif kind < 0.7:
                cases = "".join(f"    case {c}: v{r.randrange(nlocals)} += {r.randint(1, 1000)}; break;\n" for c in range(r.randint(4, 24)))
                out.append(f"  switch (v{a} & 31) {{\n{cases}    default: v{b} = ext(v{a}, {k}); }}\n")
            elif kind < 0.85:
                out.append(f"  if (p && p->a > v{a}) {{ p->d += v{b}; p = p->next; }} else {{ v{a} = ext(v{b}, {k}); }}\n")
            else:
                out.append(f"  if (v{a} > {r.randint(0, 1000)}) v{b} = f{r.randrange(max(i, 1))}(v{a}, v{b}, p);\n")
        out.append("  return " + " + ".join(f"v{j}" for j in range(nlocals)) + ";\n}\n\n")
    return "".join(out)


def perl_input(mails: int = 6000, vocabulary: int = 20000) -> str:
    """A mail filter over generated mails (the script generates them itself
    from a seed, as SPEC's perlbench does from its input files)."""
    return PERL_FILTER.replace("MAILS", str(mails)).replace("VOCABULARY", str(vocabulary))


PERL_FILTER = r"""
use strict; use warnings;
srand(20261126);
my @w = map { join '', map { ('a'..'z')[int rand 26] } 1 .. (2 + int rand 8) } 1 .. VOCABULARY;
my @spam = qw(free money offer winner viagra credit loan cheap click unsubscribe);
my %score; my %tok; my @mails;
for my $m (1 .. MAILS) {
  my $body = join ' ', map { rand() < 0.03 ? $spam[int rand @spam] : $w[int(@w * rand() ** 2)] } 1 .. (50 + int rand 300);
  my $hdr = "From: user$m\@host" . int(rand 500) . ".example.com\nSubject: " . join(' ', map { $w[int rand @w] } 1 .. 6) . "\nX-Id: " . sprintf('%08x', int rand 2**31) . "\n";
  push @mails, "$hdr\n$body\n";
}
for my $pass (1 .. 3) {
  for my $i (0 .. $#mails) {
    my $mail = $mails[$i];
    my $s = 0;
    $s += 2 while $mail =~ /\b(?:free|money|offer|winner|cheap)\b/gi;
    $s += 1 if $mail =~ /^From: .*\@host(\d+)/m && $1 % 7 == 0;
    $s += 3 if $mail =~ /click\s+\w+\s+unsubscribe/i;
    $tok{lc $_}++ for $mail =~ /(\w{4,})/g;
    $score{$i} = $s;
    (my $norm = $mail) =~ s/[aeiou]+/V/g;
    $tok{length $norm}++;
  }
}
my @top = (sort { $tok{$b} <=> $tok{$a} || $a cmp $b } keys %tok)[0 .. 49];
my $spam = grep { $score{$_} > 6 } keys %score;
print scalar(@top), " $spam\n";
"""


def hmmer_inputs(r: random.Random) -> tuple[str, str]:
    db = []
    for i in range(30000):
        n = r.randint(100, 500)
        db.append(f">seq{i}\n" + "".join(r.choice(AMINO) for _ in range(n)) + "\n")
    core = "".join(r.choice(AMINO) for _ in range(260))
    aln = ["# STOCKHOLM 1.0\n"]
    for k in range(24):
        s = "".join(c if r.random() > 0.25 else r.choice(AMINO) for c in core)
        aln.append(f"fam{k:02d} {s}\n")
    aln.append("//\n")
    return "".join(db), "".join(aln)


def gnugo_input(r: random.Random) -> str:
    lines = ["boardsize 19", "clear_board", "komi 6.5"]
    cols = "ABCDEFGHJKLMNOPQRST"
    used = set()
    color = "black"
    for _ in range(60):
        while True:
            v = (r.randrange(19), r.randrange(19))
            if v not in used:
                used.add(v)
                break
        lines.append(f"play {color} {cols[v[0]]}{v[1] + 1}")
        color = "white" if color == "black" else "black"
    for _ in range(12):
        lines.append(f"genmove {color}")
        color = "white" if color == "black" else "black"
    lines.append("final_score")
    lines.append("quit")
    return "\n".join(lines) + "\n"


def xalan_inputs(r: random.Random) -> tuple[str, str]:
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(3, 10))) for _ in range(5000)]
    out = ["<?xml version=\"1.0\"?>\n<catalog>\n"]
    for i in range(60000):
        out.append(
            f"<item id=\"i{i}\" cat=\"c{r.randrange(300)}\" price=\"{r.randint(1, 99999)}\">"
            f"<name>{' '.join(r.choice(words) for _ in range(3))}</name>"
            f"<ref to=\"i{r.randrange(60000)}\"/>"
            f"<desc>{' '.join(r.choice(words) for _ in range(r.randint(5, 30)))}</desc></item>\n"
        )
    out.append("</catalog>\n")
    xsl = """<?xml version="1.0"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:key name="byid" match="item" use="@id"/>
<xsl:key name="bycat" match="item" use="@cat"/>
<xsl:output method="html"/>
<xsl:template match="/">
<html><body>
<xsl:for-each select="catalog/item[generate-id() = generate-id(key('bycat', @cat)[1])]">
<xsl:sort select="@cat"/>
<h2><xsl:value-of select="@cat"/> (<xsl:value-of select="count(key('bycat', @cat))"/>)</h2>
<ul>
<xsl:for-each select="key('bycat', @cat)">
<xsl:sort select="@price" data-type="number"/>
<li><xsl:value-of select="name"/>: <xsl:value-of select="key('byid', ref/@to)/name"/>
 <xsl:value-of select="string-length(desc)"/></li>
</xsl:for-each>
</ul>
</xsl:for-each>
</body></html>
</xsl:template>
</xsl:stylesheet>
"""
    return "".join(out), xsl


def xalan_large(items: int = 400_000) -> str:
    """A catalogue of SPEC's t5.xml size (100 MB), from its own generator
    (seed SEED), with a category per 200 items as in ``xalan-in.xml``."""
    r = random.Random(SEED)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(3, 10))) for _ in range(5000)]
    out = ["<?xml version=\"1.0\"?>\n<catalog>\n"]
    for i in range(items):
        out.append(
            f"<item id=\"i{i}\" cat=\"c{r.randrange(items // 200)}\" price=\"{r.randint(1, 99999)}\">"
            f"<name>{' '.join(r.choice(words) for _ in range(3))}</name>"
            f"<ref to=\"i{r.randrange(items)}\"/>"
            f"<desc>{' '.join(r.choice(words) for _ in range(r.randint(5, 30)))}</desc></item>\n"
        )
    out.append("</catalog>\n")
    return "".join(out)


def large(out: Path) -> None:
    """The larger inputs of the footprint ablations (hw-compare.md)."""
    (out / "perl-large.pl").write_text(perl_input(mails=60000, vocabulary=200000))
    (out / "perl-mails.pl").write_text(perl_input(mails=60000))
    (out / "perl-vocab.pl").write_text(perl_input(vocabulary=200000))
    (out / "xalan-large.xml").write_text(xalan_large())


def main() -> None:
    ap = argparse.ArgumentParser(
        description="Write the hardware comparison's deterministic inputs "
        "(docs/experiments/hw-compare.md) into a directory."
    )
    ap.add_argument("out", type=Path, help="directory to write the inputs to (created if missing)")
    ap.add_argument(
        "--large",
        action="store_true",
        help="write the footprint ablations' larger inputs instead",
    )
    args = ap.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.large:
        large(out)
        return
    r = random.Random(SEED)
    (out / "bzip2-in.bin").write_bytes(bzip2_input(r))
    (out / "gcc-in.c").write_text(gcc_input(r))
    (out / "perl-in.pl").write_text(perl_input())
    db, aln = hmmer_inputs(r)
    (out / "hmmer-db.fa").write_text(db)
    (out / "hmmer-aln.sto").write_text(aln)
    (out / "gnugo.gtp").write_text(gnugo_input(r))
    xml, xsl = xalan_inputs(r)
    (out / "xalan-in.xml").write_text(xml)
    (out / "xalan.xsl").write_text(xsl)


if __name__ == "__main__":
    main()
