-- Up Migration
-- listPets' `q` finds every word one letter away, as the contract says, short words included
-- (docs/decisions/0011-pet-search.md). Before, a typo also had to share a quarter of the
-- word's letter triples (pg_trgm's similarity, the threshold of the vocabulary's trigram
-- index), which one edit of a short word often does not: `tim` (a letter changed) and `tmo`
-- (two swapped) did not find `Tom`, `lnua` did not find `Luna`, `bxo` did not find `Bo`.
--
-- Invariants:
-- 1. search_class(term, w) = 1 for a word of 3 to 255 characters and a term one edit away
--    (a letter left out, added or changed, two neighbours swapped), or two edits from 8
--    characters when the two share a quarter of their letter triples. A function of the two
--    alone (migrations/1763700000025's invariant 4).
-- 2. search_typos(w) returns every vocabulary word of class 1: those the trigram index finds,
--    for a word of at most 5 the words it is with one letter left out or two neighbours
--    swapped (looked up by the vocabulary's b-tree), and, for a word of 3, the words of 3
--    with its last letter one letter away (a partial index of them). Any other one edit
--    keeps a quarter of the triples: of a word of n letters' n + 1 triples, a change keeps
--    n - 2 of at most n + 4 in all (n from 4), an addition n - 1 of at most n + 4 (n from
--    3), a letter left out n - 2 of at most n + 3 (n from 4), a swap n - 3 of at most n + 5
--    (n from 6). Similarity counts a repeated triple once; a change still keeps the first
--    two triples or the last two, which differ (test/db/pet-terms.test.ts checks every
--    one-edit variant of words with repeated letters).
--
-- A walk by relevance in flight while this runs may skip pets that the newly matched words
-- place before its cursor; it returns none twice.
SET LOCAL lock_timeout = '1s';

-- The words of 3, by their last letter: a word of 3 with one letter changed keeps its last
-- letter unless the last is the one changed, which the trigram index finds (two triples
-- shared of six in all).
CREATE INDEX search_vocabulary_three ON search_vocabulary (reverse(term)) WHERE length(term) = 3;

-- The words one edit from w that trigrams may miss (w of at most 5 letters): w with one
-- letter left out, and w with two neighbouring letters swapped.
CREATE FUNCTION search_edits(w text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array(SELECT overlay(w PLACING '' FROM i FOR 1) FROM generate_series(1, length(w)) AS i
    UNION ALL SELECT overlay(w PLACING substr(w, i + 1, 1) || substr(w, i, 1) FROM i FOR 2) FROM generate_series(1, length(w) - 1) AS i)
$$;

-- search_distance written once: it holds a sub-select, and each copy inlined is a subplan of
-- every statement that classes terms (docs/decisions/0011-pet-search.md). No typo of a
-- word over 255 characters, folded (`ﬃ` is three): levenshtein reads 255 at most, and
-- words alike in their first 255 would count as one edit apart.
CREATE OR REPLACE FUNCTION search_class(term text, w text) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN term = w THEN 3
    WHEN w ~ '^[0-9]+$' OR term ~ '^[0-9]+$' THEN 0
    WHEN starts_with(term, w) THEN 2
    WHEN length(w) BETWEEN 3 AND 255 AND length(term) <= 255 AND abs(length(term) - length(w)) <= 2
      AND search_distance(term, w) <= CASE WHEN length(w) >= 8 AND similarity(term, w) >= 0.25 THEN 2 ELSE 1 END THEN 1
    ELSE 0 END
$$;

-- Each source of candidates by its own index; enable_seqscan off, so that a plan made while
-- the vocabulary was small still reads them by index once it is large.
CREATE OR REPLACE FUNCTION search_typos(w text) RETURNS TABLE (term text, edits int)
  LANGUAGE plpgsql STABLE SET pg_trgm.similarity_threshold = 0.25 SET enable_seqscan = off SET enable_bitmapscan = on AS $$
BEGIN
  RETURN QUERY SELECT m.term::text, m.d FROM (SELECT DISTINCT c.term, search_distance(c.term, w) AS d FROM (
        SELECT v.term FROM search_vocabulary v WHERE v.term % w
        UNION ALL SELECT v.term FROM search_vocabulary v WHERE length(w) <= 5 AND v.term = ANY (search_edits(w))
        UNION ALL SELECT v.term FROM search_vocabulary v WHERE length(w) = 3 AND length(v.term) = 3
          AND reverse(v.term) >= right(w, 1) AND reverse(v.term) < right(w, 1) || chr(1114111) AND levenshtein(v.term, w) = 1
      ) AS c WHERE length(w) >= 3 AND search_class(c.term, w) = 1) AS m
    ORDER BY m.d, m.term;
END;
$$;

-- Down Migration
SET LOCAL lock_timeout = '1s';
CREATE OR REPLACE FUNCTION search_typos(w text) RETURNS TABLE (term text, edits int)
  LANGUAGE plpgsql STABLE SET pg_trgm.similarity_threshold = 0.25 SET enable_seqscan = off SET enable_bitmapscan = on AS $$
BEGIN
  RETURN QUERY SELECT m.term::text, m.d FROM (SELECT DISTINCT v.term, search_distance(v.term, w) AS d FROM search_vocabulary v
      WHERE length(w) >= 3 AND v.term % w AND search_class(v.term, w) = 1) AS m
    ORDER BY m.d, m.term;
END;
$$;
CREATE OR REPLACE FUNCTION search_class(term text, w text) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN term = w THEN 3
    WHEN w ~ '^[0-9]+$' OR term ~ '^[0-9]+$' THEN 0
    WHEN starts_with(term, w) THEN 2
    WHEN length(w) >= 3 AND abs(length(term) - length(w)) <= 2 AND search_distance(term, w) <= CASE WHEN length(w) >= 8 THEN 2 ELSE 1 END
      AND similarity(term, w) >= 0.25 THEN 1
    ELSE 0 END
$$;
DROP FUNCTION search_edits(text);
DROP INDEX search_vocabulary_three;
