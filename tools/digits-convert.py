#!/usr/bin/env python3
"""Converts the UCI optical-recognition 8x8 digits, as Debian's python3-sklearn
ships them (sklearn/datasets/data/digits.csv.gz), into examples/data/digits.txt,
the small text file that examples/train-cnn.c reads.

This is a one-time conversion, run by hand; the build never runs it and
python3-sklearn is not a build dependency. Usage:

    python3 tools/digits-convert.py [SOURCE.csv.gz] > examples/data/digits.txt

The source has one image per line: 64 comma-separated pixel values (0..16,
the 8x8 image row by row) followed by the label (0..9). The output keeps the
order of the images and writes each as one line "LABEL PIXELS", where PIXELS
is 64 characters, one per pixel in the same order, each pixel value written as
one base-17 digit (0-9 then A-G for 10..16), so that a C reader needs only
fgets and a character lookup. See doc/datasets.md for the attribution and
license (CC BY 4.0).
"""
import gzip
import sys

DEFAULT_SOURCE = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
DIGITS = "0123456789ABCDEFG"


def main(argv):
    source = argv[1] if len(argv) > 1 else DEFAULT_SOURCE
    with gzip.open(source, "rt", encoding="ascii") as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    out = sys.stdout
    out.write("# adnn-digits 1: the UCI optical recognition of handwritten digits, 8x8 images\n")
    out.write("# E. Alpaydin and C. Kaynak, UCI Machine Learning Repository, "
              "https://archive.ics.uci.edu/dataset/80\n")
    out.write("# License: CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/); "
              "attribution and format: doc/datasets.md\n")
    out.write("# Converted by tools/digits-convert.py from sklearn/datasets/data/digits.csv.gz\n")
    out.write("# Each line after the count: LABEL, a space, 64 pixels row by row, "
              "each 0..16 as one character of 0-9A-G\n")
    out.write("%d\n" % len(rows))
    for row in rows:
        if len(row) != 65:
            sys.exit("digits-convert: a line has %d fields, not 65" % len(row))
        values = [int(v) for v in row]
        pixels, label = values[:64], values[64]
        if not 0 <= label <= 9 or any(not 0 <= p <= 16 for p in pixels):
            sys.exit("digits-convert: a value is out of range")
        out.write("%d %s\n" % (label, "".join(DIGITS[p] for p in pixels)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
