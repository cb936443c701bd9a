-- actsagent demo: a small online shop. Names are deliberately a little messy, as in real life.
CREATE TABLE customers (
  id           integer PRIMARY KEY,
  full_name    text NOT NULL,
  email        text,
  country_cd   char(2),
  signup_dt    date NOT NULL,
  deleted_at   timestamp
);
COMMENT ON TABLE customers IS 'one row per account, including closed ones';
COMMENT ON COLUMN customers.country_cd IS 'ISO 3166-1 alpha-2, e.g. DE, US, FR';
COMMENT ON COLUMN customers.deleted_at IS 'empty unless the account was closed';

CREATE TABLE product_catalog (
  prod_id      integer PRIMARY KEY,
  prod_nm      text NOT NULL,
  category     text NOT NULL,
  unit_price   numeric(10,2) NOT NULL,
  discontinued boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE product_catalog IS 'products on sale now or in the past';
COMMENT ON COLUMN product_catalog.unit_price IS 'list price in EUR';

CREATE TABLE employees (
  emp_id       integer PRIMARY KEY,
  "FirstName"  text NOT NULL,
  last_name    text NOT NULL,
  dept         text NOT NULL,
  hire_date    date NOT NULL,
  mgr_id       integer REFERENCES employees(emp_id)
);
COMMENT ON TABLE employees IS 'staff; mgr_id points to the manager';

CREATE TABLE orders (
  order_id     integer PRIMARY KEY,
  cust_id      integer NOT NULL REFERENCES customers(id),
  sales_rep    integer REFERENCES employees(emp_id),
  order_ts     timestamp NOT NULL,
  status       text NOT NULL,
  ship_country char(2)
);
COMMENT ON TABLE orders IS 'one row per checkout';
COMMENT ON COLUMN orders.status IS 'PAID, REFUNDED or CANCELLED; refunded orders keep their items';
COMMENT ON COLUMN orders.order_ts IS 'UTC';

CREATE TABLE order_items (
  order_id     integer NOT NULL REFERENCES orders(order_id),
  prod_id      integer NOT NULL REFERENCES product_catalog(prod_id),
  qty          integer NOT NULL,
  unit_price   numeric(10,2) NOT NULL,
  PRIMARY KEY (order_id, prod_id)
);
COMMENT ON COLUMN order_items.unit_price IS 'price actually charged per unit, after discounts, EUR';

CREATE TABLE payments (
  pay_id       integer PRIMARY KEY,
  order_id     integer NOT NULL REFERENCES orders(order_id),
  amt          numeric(10,2) NOT NULL,
  method       text NOT NULL,
  paid_at      timestamp NOT NULL
);
COMMENT ON COLUMN payments.amt IS 'amount in EUR; refunds are negative';
