-- Bring your own SQL: queries over the tables of tables/ (sales.parquet,
-- stores.csv) and a small table made here.
--   window-harness run examples/byo/sales.sql --tables examples/byo/tables

CREATE TABLE targets (store INTEGER, monthly DOUBLE PRECISION);
INSERT INTO targets VALUES (1, 120.00), (2, 150.00), (3, 40.00);

-- each store's running revenue, day by day
SELECT store, sold_on, sale_id,
       sum(amount) OVER (PARTITION BY store ORDER BY sold_on, sale_id) AS running
FROM sales;

-- the biggest sale of each city
SELECT city, sale_id, amount
FROM (SELECT st.city, s.sale_id, s.amount,
             row_number() OVER (PARTITION BY st.city ORDER BY s.amount DESC NULLS LAST, s.sale_id) AS rn
      FROM sales s JOIN stores st ON s.store = st.store) AS ranked
WHERE rn = 1;

-- the gap to the store's sale before
SELECT sale_id, store, amount - lag(amount) OVER (PARTITION BY store ORDER BY sale_id) AS change
FROM sales;

-- how far each store is towards its monthly target
SELECT s.store, s.sale_id,
       sum(s.amount) OVER (PARTITION BY s.store ORDER BY s.sale_id) / t.monthly AS towards_target
FROM sales s JOIN targets t ON s.store = t.store;

-- a three-day moving total over the whole chain
SELECT sale_id, sold_on,
       sum(amount) OVER (ORDER BY sold_on RANGE BETWEEN INTERVAL '2' DAY PRECEDING AND CURRENT ROW) AS three_days
FROM sales;

-- stores in order of opening (UNION without ALL: the model holds only UNION ALL)
SELECT store FROM stores UNION SELECT store FROM targets;
