"""Deterministic rows for the demo shop (seeded), so every machine gets the same database."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from decimal import Decimal

SEED = 20261129
FIRST = [
    "Ada",
    "Bruno",
    "Chloe",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemi",
    "Lars",
    "Mila",
    "Noah",
    "Olga",
    "Pablo",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Yara",
    "Zoe",
]
LAST = [
    "Lovelace",
    "Schmidt",
    "Martin",
    "Ivanov",
    "Garcia",
    "Haddad",
    "Hopper",
    "Tanaka",
    "Silva",
    "Berg",
    "Okafor",
    "Nilsen",
    "Novak",
    "Smith",
    "Petrova",
    "Lopez",
    "Kelly",
    "Rossi",
    "Larsen",
    "Singh",
]
COUNTRIES = ["DE", "DE", "DE", "FR", "FR", "US", "US", "US", "GB", "NL", "ES", "IT", "SE", "PL"]
CATEGORIES = {
    "Coffee": ["Espresso Beans 1kg", "Filter Roast 500g", "Decaf Blend 250g", "Cold Brew Pack", "Single Origin Kenya"],
    "Tea": ["Green Sencha", "Earl Grey Tin", "Rooibos Loose", "Chai Spice Mix"],
    "Equipment": [
        "Hand Grinder",
        "Pour-Over Kit",
        "Milk Frother",
        "Espresso Machine Pro",
        "Digital Scale",
        "Gooseneck Kettle",
    ],
    "Accessories": ["Ceramic Mug", "Travel Cup", "Cleaning Tablets", "Paper Filters x100", "Tamper 58mm"],
}
PRICES = {"Coffee": (9, 35), "Tea": (6, 18), "Equipment": (25, 640), "Accessories": (4, 29)}
DEPTS = ["Sales", "Sales", "Sales", "Support", "Marketing", "Finance"]
METHODS = ["card", "card", "card", "paypal", "invoice"]


def generate() -> dict[str, list[tuple]]:
    rnd = random.Random(SEED)
    start = date(2023, 1, 1)
    customers = []
    for i in range(1, 401):
        fn, ln = rnd.choice(FIRST), rnd.choice(LAST)
        signup = start + timedelta(days=rnd.randrange(0, 700))
        deleted = (
            datetime.combine(signup, datetime.min.time()) + timedelta(days=rnd.randrange(30, 300))
            if rnd.random() < 0.06
            else None
        )
        email = f"{fn}.{ln}{i}@example.com".lower() if rnd.random() > 0.05 else None
        customers.append((i, f"{fn} {ln}", email, rnd.choice(COUNTRIES), signup, deleted))
    products, pid = [], 100
    for cat, names in CATEGORIES.items():
        lo, hi = PRICES[cat]
        for n in names:
            pid += 1
            products.append((pid, n, cat, Decimal(rnd.randrange(lo * 100, hi * 100)) / 100, rnd.random() < 0.1))
    employees: list[tuple[int, str, str, str, date, int | None]] = [
        (1, "Marta", "Keller", "Management", date(2019, 3, 1), None)
    ]
    for e in range(2, 13):
        employees.append(
            (
                e,
                rnd.choice(FIRST),
                rnd.choice(LAST),
                rnd.choice(DEPTS),
                date(2020, 1, 1) + timedelta(days=rnd.randrange(0, 1200)),
                1 if e < 5 else rnd.randrange(2, 5),
            )
        )
    reps = [e[0] for e in employees if e[3] == "Sales"] or [2]
    orders, items, payments = [], [], []
    pay_id = 0
    for oid in range(1, 2501):
        cust = rnd.choice(customers)
        ts = datetime.combine(cust[4], datetime.min.time()) + timedelta(
            days=rnd.randrange(0, 600), minutes=rnd.randrange(0, 1440)
        )
        status = rnd.choices(["PAID", "REFUNDED", "CANCELLED"], weights=[86, 8, 6])[0]
        orders.append(
            (
                oid,
                cust[0],
                rnd.choice(reps) if rnd.random() < 0.7 else None,
                ts,
                status,
                cust[3] if rnd.random() < 0.93 else rnd.choice(COUNTRIES),
            )
        )
        total = Decimal(0)
        for prod in rnd.sample(products, rnd.choice([1, 1, 2, 2, 3, 4])):
            qty = rnd.choice([1, 1, 1, 2, 3])
            price = (prod[3] * Decimal(rnd.choice([100, 100, 100, 90, 85])) / 100).quantize(Decimal("0.01"))
            items.append((oid, prod[0], qty, price))
            total += price * qty
        if status != "CANCELLED":
            pay_id += 1
            method = rnd.choice(METHODS)
            payments.append((pay_id, oid, total, method, ts + timedelta(minutes=rnd.randrange(1, 90))))
            if status == "REFUNDED":
                pay_id += 1
                payments.append((pay_id, oid, -total, method, ts + timedelta(days=rnd.randrange(2, 30))))
    return {
        "customers": customers,
        "product_catalog": products,
        "employees": employees,
        "orders": orders,
        "order_items": items,
        "payments": payments,
    }
