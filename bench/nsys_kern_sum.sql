-- The kernel summary of `nsys stats --report cuda_gpu_kern_sum` in plain SQLite, for the
-- sqlite3 command-line tool (bench/run_benchmarks.sh: `sqlite3 -csv -header FILE < this`).
-- Grouped by demangled name: Time (%), total, instances, avg, median, min, max, stddev, as nsys
-- prints them. nsys's own query uses its median()/stdev() SQL extensions, which the stock sqlite3
-- tool lacks, so the median comes from a window (mean of the two middle values for an even count,
-- as nsys computes it) and the stddev is the sample standard deviation (n - 1) around the mean.
-- Checked against examples/samples/llama_decode_h100.nsys_kern_sum.csv (nsys's own output).
WITH
    k AS (
        SELECT demangledName AS nameId, "end" - start AS dur
        FROM CUPTI_ACTIVITY_KIND_KERNEL
    ),
    ranked AS (
        SELECT
            nameId,
            dur,
            row_number() OVER (PARTITION BY nameId ORDER BY dur) AS rn,
            count(*) OVER (PARTITION BY nameId) AS cnt,
            avg(dur) OVER (PARTITION BY nameId) AS mean
        FROM k
    ),
    summary AS (
        SELECT
            nameId,
            sum(dur) AS total,
            count(*) AS num,
            avg(dur) AS avg,
            avg(CASE WHEN rn IN ((cnt + 1) / 2, (cnt + 2) / 2) THEN dur END) AS med,
            min(dur) AS min,
            max(dur) AS max,
            CASE WHEN count(*) > 1
                 THEN sqrt(sum((dur - mean) * (dur - mean)) / (count(*) - 1))
                 ELSE 0 END AS stddev
        FROM ranked
        GROUP BY nameId
    ),
    totals AS (
        SELECT sum(total) AS total FROM summary
    )
SELECT
    round(summary.total * 100.0 / (SELECT total FROM totals), 1) AS "Time (%)",
    summary.total AS "Total Time (ns)",
    summary.num AS "Instances",
    round(summary.avg, 1) AS "Avg (ns)",
    round(summary.med, 1) AS "Med (ns)",
    summary.min AS "Min (ns)",
    summary.max AS "Max (ns)",
    round(summary.stddev, 1) AS "StdDev (ns)",
    ids.value AS "Name"
FROM summary
LEFT JOIN StringIds AS ids ON ids.id = summary.nameId
ORDER BY 2 DESC;
