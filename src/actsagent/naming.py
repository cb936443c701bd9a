"""Identifiers as words: splitting, dictionary checks, abbreviating and expanding abbreviations.

Obscure schemas (``A2``, ``dname``, ``cnt_k12``) defeat both people and models. The degraded
benchmark makes such names on purpose (``abbreviate``), the knowledge base turns names back into
words for its descriptions (``words``, ``expand``), and schema refinement screens for them
(``obscurity``). The dictionary is wordninja's English unigram list (125k words by frequency,
shipped inside the package, so it works offline).
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

COMMON_RANK = 30_000  # a word this frequent counts as a dictionary word
# short words that are clear in a schema even though they are short
CLEAR_SHORT = frozenset(
    {
        "id",
        "age",
        "sex",
        "day",
        "year",
        "name",
        "type",
        "date",
        "time",
        "city",
        "cost",
        "size",
        "code",
        "rank",
        "role",
        "team",
        "area",
        "zip",
        "url",
        "email",
        "fee",
        "tax",
        "pay",
        "key",
        "row",
        "map",
        "job",
        "car",
        "dog",
        "pet",
        "art",
        "law",
        "bar",
        "gdp",
        "is",
        "of",
        "no",
        "to",
        "in",
        "on",
        "at",
        "by",
        "per",
        "for",
        "and",
        "the",
        "a",
        "an",
        "max",
        "min",
        "avg",
        "sum",
        "top",
        "low",
        "end",
        "net",
        "gross",
    }
)
_VOWELS = set("aeiou")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


@lru_cache(maxsize=1)
def _ranks() -> dict[str, int]:
    import wordninja

    costs = wordninja.DEFAULT_LANGUAGE_MODEL._wordcost  # word -> log cost, monotone in frequency rank
    return {w: i for i, w in enumerate(sorted(costs, key=costs.get))}


def rank(word: str) -> int | None:
    """Frequency rank of ``word`` in the English list (0 = most frequent), None when absent."""
    return _ranks().get(word.lower())


def is_word(word: str) -> bool:
    w = word.lower()
    if w.isdigit() or w in CLEAR_SHORT:
        return True
    r = rank(w)
    return r is not None and r < COMMON_RANK and len(w) > 2


def words(name: str) -> list[str]:
    """``superheroName``/``superhero_name``/``superheroname`` -> ``['superhero', 'name']`` (lower case)."""
    out: list[str] = []
    for part in _SPLIT.split(name):
        for piece in _CAMEL.split(part):
            if not piece:
                continue
            low = piece.lower()
            if low.isdigit() or is_word(low) or len(low) <= 3:
                out.append(low)
                continue
            import wordninja

            split = wordninja.split(low)
            # keep a split only when every part is a real word (``cntk`` must not become ``c n t k``)
            out += split if split and all(is_word(s) for s in split) else [low]
    return out


def parts(name: str) -> list[str]:
    """The identifier split only at punctuation (``cnt_k12`` -> ``cnt``, ``k12``): glossary terms match these too."""
    return [p.lower() for p in _SPLIT.split(name) if p]


def humanize(name: str) -> str:
    return " ".join(words(name)) or name


def obscurity(name: str) -> tuple[float, list[str]]:
    """How obscure an identifier reads, 0 (plain words) .. 1 (a code), with the reasons."""
    ws = words(name)
    reasons: list[str] = []
    if not ws:
        return 1.0, ["no letters"]
    alpha = [w for w in ws if not w.isdigit()]
    if not alpha:
        return 1.0, ["digits only"]
    if re.fullmatch(r"[A-Za-z]{1,2}[0-9]+", name):
        return 1.0, [f"code-like name {name!r}"]
    unknown = [w for w in alpha if not is_word(w)]
    overlap = 1 - len(unknown) / len(alpha)
    score = 1 - overlap
    if unknown:
        reasons.append(f"not dictionary words: {', '.join(unknown)}")
    letters = sum(len(w) for w in alpha)
    if letters <= 3 and name.lower() not in CLEAR_SHORT:
        score = max(score, 0.8)
        reasons.append(f"very short ({letters} letters)")
    if any(len(w) == 1 for w in alpha) and name.lower() not in CLEAR_SHORT:
        score = max(score, 0.6)
        reasons.append("single-letter parts")
    return round(min(score, 1.0), 3), reasons


# ----- abbreviating (the degraded benchmark) ----------------------------------------------------


def drop_vowels(word: str) -> str:
    """``country`` -> ``cntry``: first letter kept, later vowels and doubled letters dropped."""
    if len(word) <= 3 or word.isdigit():
        return word
    out = [word[0]]
    for ch in word[1:]:
        if ch in _VOWELS or ch == out[-1]:
            continue
        out.append(ch)
    return "".join(out) if len(out) >= 2 else word[:3]


def abbreviate(name: str, rng: random.Random) -> str:
    """An abbreviation of ``name`` in one of the styles real obscure schemas use, chosen by ``rng``:
    vowel-dropped words (``cnt_k12``), initials plus the last word (``dname``), truncation (``pop``),
    or an acronym (``sic``). Always lower case, letters/digits/underscores."""
    ws = words(name) or [name.lower()]
    alpha = [w for w in ws if not w.isdigit()]
    styles = ["vowels", "truncate"] + (["initials", "acronym"] if len(ws) >= 2 else [])
    style = rng.choice(styles)
    if style == "vowels":
        out = "_".join(drop_vowels(w) for w in ws)
    elif style == "truncate":
        out = "_".join(w if w.isdigit() else w[: rng.choice((3, 4))] for w in ws)
    elif style == "initials":
        out = "".join(w[0] for w in ws[:-1]) + drop_vowels(ws[-1])
    else:
        out = "".join(w[0] for w in alpha) + "".join(w for w in ws if w.isdigit())
    out = re.sub(r"[^a-z0-9_]", "", out.lower()).strip("_")
    if not out or out[0].isdigit():
        out = "c" + out
    return out


# ----- expanding (the knowledge base, refinement) ------------------------------------------------

KNOWN_ABBREVIATIONS = {
    "cnt": "count",
    "nm": "name",
    "nme": "name",
    "dt": "date",
    "amt": "amount",
    "qty": "quantity",
    "desc": "description",
    "num": "number",
    "no": "number",
    "nbr": "number",
    "dept": "department",
    "emp": "employee",
    "addr": "address",
    "cd": "code",
    "pct": "percent",
    "perc": "percent",
    "tel": "telephone",
    "ph": "phone",
    "yr": "year",
    "mth": "month",
    "mo": "month",
    "dob": "date of birth",
    "cm": "centimetres",
    "kg": "kilograms",
    "sal": "salary",
    "st": "street",
    "avg": "average",
    "tot": "total",
    "ttl": "total",
    "max": "maximum",
    "min": "minimum",
    "lbl": "label",
    "typ": "type",
    "cat": "category",
    "ctgry": "category",
    "stat": "status",
    "sts": "status",
    "loc": "location",
    "lat": "latitude",
    "lng": "longitude",
    "lon": "longitude",
    "pop": "population",
    "cnty": "county",
    "ctry": "country",
    "cty": "city",
    "grp": "group",
    "org": "organisation",
    "mgr": "manager",
    "src": "source",
    "dst": "destination",
    "val": "value",
    "wt": "weight",
    "ht": "height",
    "std": "student",
    "stu": "student",
    "crs": "course",
    "prof": "professor",
    "inst": "institution",
    "univ": "university",
    "acct": "account",
    "trans": "transaction",
    "bal": "balance",
    "exp": "expense",
    "inc": "income",
    "fname": "first name",
    "lname": "last name",
    "dname": "department name",
    "ename": "employee name",
    "id": None,
    "k12": "kindergarten to grade 12",
}


@lru_cache(maxsize=4096)
def expand(token: str) -> str | None:
    """What ``token`` abbreviates, when that is reasonably sure: a well-known schema abbreviation
    (``qty``), a word whose vowels were dropped (``cntry`` -> ``country``), a common word it is
    the start of (``popul`` -> ``population``), or a letter or two before a word (``dname`` ->
    ``d name``). None when the token is a word already or nothing plausible is found: a wrong
    expansion misleads more than none."""
    t = token.lower()
    if t in KNOWN_ABBREVIATIONS:
        return KNOWN_ABBREVIATIONS[t]
    if len(t) < 2 or t.isdigit() or is_word(t) or not t.isalpha():
        return None
    best: dict[str, tuple[int, str]] = {}
    for w, r in _ranks().items():
        if r >= COMMON_RANK or w[0] != t[0] or len(w) <= len(t) or not w.isalpha():
            continue
        if len(t) >= 4 and drop_vowels(w) == t:
            kind = "vowels"
        elif len(t) >= 4 and w.startswith(t):
            kind = "prefix"
        else:
            continue
        if kind not in best or r < best[kind][0]:
            best[kind] = (r, w)
    for kind in ("vowels", "prefix"):
        if kind in best:
            return best[kind][1]
    for cut in (1, 2):
        head, tail = t[:cut], t[cut:]
        if len(tail) >= 3 and is_word(tail):
            return f"{head} {tail}"
    return None


def _subsequence(short: str, long_: str) -> bool:
    it = iter(long_)
    return all(ch in it for ch in short)


def readable(name: str) -> str:
    """Words of ``name`` with abbreviations expanded where a plausible expansion exists."""
    return " ".join(expand(w) or w for w in words(name)) or name
