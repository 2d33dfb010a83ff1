-- Up Migration
-- listPets by relevance reads at most `walk` (term, pet) rows of pet_terms a page (the
-- service passes FILTERED_WALK, src/catalogue/pet-orders.ts): words that rarely occur together,
-- or a filter few of a word's pets meet, walked a word's every pet in one statement. A page
-- that reaches the bound ends with its last (term, pet) and no body: the next page resumes
-- after it, as after a pet it answered (docs/decisions/0011-pet-search.md, invariant 5). The
-- order, the levels and what matches are 1763700000025's.
SET LOCAL lock_timeout = '1s';
-- The typos are read from the trigram index by a bitmap scan, the only scan a GIN index has,
-- also when pet_search_page, which turns bitmap scans off, calls search_typos
-- (docs/decisions/0011-pet-search.md).
ALTER FUNCTION search_typos(text) SET enable_bitmapscan = on;
-- The function of nine arguments stays as it is, unbounded, for the instances that still call
-- it while a deployment rolls (a row with no body would be a pet to them); this one takes the
-- bound as a tenth, with no default, so that no call of nine can reach it.
CREATE FUNCTION pet_search_page(q text, after_level int, after_term text, after_id bigint, f_status text, f_category bigint, f_tags text[], f_ids bigint[], size int, walk int)
  RETURNS TABLE (id bigint, body text, level int, term text)
  LANGUAGE plpgsql STABLE SET enable_bitmapscan = off AS $$
-- No bitmap scan: a generic plan (the pool's sessions make only those, src/db/pool.ts) walks
-- pet_terms' primary key in order and stops at the page's end, never reads every pet of the
-- words to sort them (docs/decisions/0011-pet-search.md).
#variable_conflict use_column
DECLARE
  words text[] := search_query(q);
  dw text;
  single boolean;
  a_class int;
  a_sub int;
  lvl int;
  c int;
  t text COLLATE "C";
  resume text COLLATE "C";
  needed int := size + 1;
  walked int := 0;
  lo_term text COLLATE "C";
  lo_id bigint;
  hi text COLLATE "C";
  got int;
  last_term text;
  last_id bigint;
BEGIN
  IF cardinality(words) = 0 THEN RETURN; END IF;
  SELECT x.w INTO dw FROM unnest(words) WITH ORDINALITY AS x(w, i) ORDER BY length(x.w) DESC, x.i LIMIT 1;
  single := cardinality(words) = 1;
  IF after_level IS NOT NULL THEN
    a_class := search_class(after_term, dw);
    a_sub := CASE WHEN a_class = 1 THEN search_distance(after_term, dw) ELSE 0 END;
  END IF;
  FOR lvl IN REVERSE 3..1 LOOP
    CONTINUE WHEN after_level IS NOT NULL AND lvl > after_level;
    FOR c IN REVERSE 3..1 LOOP
      -- One word: a pet's level is its first term's class. Several: the driving word's terms at least as good as the level.
      CONTINUE WHEN (single AND c <> lvl) OR c < lvl;
      CONTINUE WHEN lvl = after_level AND c > a_class;
      resume := CASE WHEN lvl = after_level AND c = a_class THEN after_term END;
      CONTINUE WHEN c = 2 AND dw ~ '^[0-9]+$';
      -- The word itself, the words dw begins (in code point order, one range of pet_terms'
      -- primary key: walked as one, (term, pet_id) after the cursor's), or its typos from the
      -- vocabulary by edits, then code point.
      FOR t IN
        SELECT dw WHERE c <> 1
        UNION ALL (SELECT y.term FROM search_typos(dw) AS y WHERE c = 1 AND (resume IS NULL OR (y.edits, y.term COLLATE "C") >= (a_sub, resume)))
      LOOP
        -- One range of pet_terms' primary key: (term, pet_id) after (lo_term, lo_id), term
        -- before hi. Of the words dw begins: after dw itself (or the cursor's), before the
        -- words past them; of one term: its pets after the cursor's (or all), term t only.
        IF c = 2 THEN
          lo_term := coalesce(resume, dw);
          lo_id := CASE WHEN resume IS NULL THEN 9223372036854775807 ELSE after_id END;
          hi := dw || chr(1114111);
        ELSE
          lo_term := t;
          lo_id := CASE WHEN t = resume THEN after_id ELSE 0 END;
          hi := t || chr(1);
        END IF;
        -- The pets of the range that match, from its first `walk` - `walked` (term, pet) rows.
        RETURN QUERY SELECT p.id, pet_json(p), lvl, pt.term::text
          FROM (SELECT pt.term, pt.pet_id FROM pet_terms pt WHERE (pt.term, pt.pet_id) > (lo_term, lo_id) AND pt.term < hi
              ORDER BY pt.term, pt.pet_id LIMIT walk - walked) AS pt
            CROSS JOIN LATERAL (SELECT * FROM pets WHERE pets.id = pt.pet_id OFFSET 0) AS p
          WHERE p.deleted_at IS NULL
            AND (f_status IS NULL OR p.status = f_status) AND (f_category IS NULL OR p.category_id = f_category)
            AND (f_tags IS NULL OR p.tags @> f_tags) AND (f_ids IS NULL OR p.id = ANY (f_ids))
            -- Its first term is this one: dw itself always is; of the words dw begins, not
            -- dw and no term dw begins before this one (search_first, written out: no
            -- function call per row).
            AND (c = 3 OR (c = 2 AND NOT dw = ANY (p.terms) AND NOT EXISTS (SELECT FROM unnest(p.terms) AS x WHERE x < pt.term AND starts_with(x, dw)))
              OR (c = 1 AND search_first(p.terms, dw) = t))
            AND (single OR search_level(p.terms, words) = lvl)
          ORDER BY pt.term, pt.pet_id LIMIT needed;
        GET DIAGNOSTICS got = ROW_COUNT;
        needed := needed - got;
        IF needed = 0 THEN RETURN; END IF;
        -- The page is not full: every row of the bounded range was read. How many, and the
        -- last; a walk that reached its bound answers that row with no body, and the next
        -- page resumes after it.
        SELECT x.term, x.pet_id, x.n INTO last_term, last_id, got
          FROM (SELECT pt.term, pt.pet_id, row_number() OVER (ORDER BY pt.term, pt.pet_id) AS n FROM pet_terms pt
              WHERE (pt.term, pt.pet_id) > (lo_term, lo_id) AND pt.term < hi ORDER BY pt.term, pt.pet_id LIMIT walk - walked) AS x
          ORDER BY x.n DESC LIMIT 1;
        walked := walked + coalesce(got, 0);
        IF walked >= walk THEN
          id := last_id; body := NULL; level := lvl; term := last_term;
          RETURN NEXT;
          RETURN;
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;
END;
$$;

-- Down Migration
SET LOCAL lock_timeout = '1s';
ALTER FUNCTION search_typos(text) RESET enable_bitmapscan;
DROP FUNCTION pet_search_page(text, int, text, bigint, text, bigint, text[], bigint[], int, int);
