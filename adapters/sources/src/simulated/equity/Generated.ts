/**
 * The generated simulated companies: a universe of fictional listed companies beside the hand-made five, so the
 * simulated default has the breadth of a real listing (sectors, sizes, fiscal year ends, share classes, companies
 * without a price feed, insiders, 13F filers holding many of them).
 *
 * Who they are (CIK, name, tickers, sector, fiscal year end, share classes, whether they have a price feed) is
 * fixed: drawn from `UNIVERSE_SEED`, not from `MARKET_DATA_SEED`, so an asset ID such as `eq:9991001:<TICKER>`
 * names the same company under every seed, and the tickers can be checked once against the SEC's real ticker
 * list (`adapters/sources/test/SimulatedEquityUniverse.test.ts`: none is a real ticker). Their numbers (financials,
 * prices, insider trades, holdings) follow the service's seed, like the hand-made companies'.
 *
 * CIKs 9991001..9991999 (companies), 9992001.. (insiders, four per company), 9995001.. (managers): numbers far
 * above anything EDGAR has assigned, like the hand-made ones.
 */
import { type CompanyProfile, cusip, cusipCheckDigit, SimulatedCompanies } from "./Companies.ts"
import { stream } from "./Seeded.ts"

/** The seed of the universe's identities (never the market seed). */
const UNIVERSE_SEED = 17_500

/** How many generated companies the simulated default carries. */
export const SimulatedGeneratedCompanies = 520

/** The first generated company's CIK; the n-th is this plus n. */
const FIRST_CIK = 9_991_001
const INSIDER_CIK_BASE = 9_992_001
const MANAGER_CIK_BASE = 9_995_001

/** The most companies the generator makes (CIKs 9991001..9991999). */
export const MaxGeneratedCompanies = 999

/**
 * Is this CIK a simulated company's (hand-made or one the generator can make)? Exactly those: other numbers of
 * the 999xxxx range are not the simulation's (the test fixtures of `ingest` use some).
 */
export const isSimulatedCik = (cik: string): boolean => {
  if (!/^\d+$/.test(cik)) return false
  const n = Number(cik)
  return (
    SimulatedCompanies.some((c) => Number(c.cik) === n) || (n >= FIRST_CIK && n < FIRST_CIK + MaxGeneratedCompanies)
  )
}

interface Sector {
  readonly sic: string
  readonly description: string
  readonly nouns: ReadonlyArray<string>
  readonly suffixes: ReadonlyArray<string>
  readonly grossMargin: readonly [number, number]
  readonly operatingMargin: readonly [number, number]
  readonly growth: readonly [number, number]
  readonly dna: number
  readonly capex: number
  readonly volatility: readonly [number, number]
  /** Share of the sector's companies paying a dividend. */
  readonly dividendShare: number
  readonly multiple: readonly [number, number]
}

const sectors: ReadonlyArray<Sector> = [
  {
    sic: "7372",
    description: "Services-Prepackaged Software",
    nouns: ["Software", "Systems", "Cloud", "Data", "Logic"],
    suffixes: ["Inc.", "Corp."],
    grossMargin: [0.62, 0.82],
    operatingMargin: [-0.25, 0.3],
    growth: [0.05, 0.35],
    dna: 0.04,
    capex: 0.03,
    volatility: [0.022, 0.045],
    dividendShare: 0.1,
    multiple: [18, 45]
  },
  {
    sic: "3674",
    description: "Semiconductors & Related Devices",
    nouns: ["Semiconductor", "Microdevices", "Photonics", "Silicon"],
    suffixes: ["Inc.", "Corp.", "Technologies Inc."],
    grossMargin: [0.4, 0.65],
    operatingMargin: [-0.05, 0.35],
    growth: [0.02, 0.25],
    dna: 0.08,
    capex: 0.12,
    volatility: [0.022, 0.04],
    dividendShare: 0.35,
    multiple: [14, 35]
  },
  {
    sic: "2834",
    description: "Pharmaceutical Preparations",
    nouns: ["Therapeutics", "Pharmaceuticals", "Biosciences", "Medicines"],
    suffixes: ["Inc.", "plc", "Corp."],
    grossMargin: [0.55, 0.88],
    operatingMargin: [-0.6, 0.32],
    growth: [-0.02, 0.3],
    dna: 0.05,
    capex: 0.04,
    volatility: [0.018, 0.05],
    dividendShare: 0.3,
    multiple: [12, 30]
  },
  {
    sic: "6022",
    description: "State Commercial Banks",
    nouns: ["Bancorp", "Financial", "Bankshares", "Trust"],
    suffixes: ["Inc.", "Corp."],
    grossMargin: [0.55, 0.7],
    operatingMargin: [0.22, 0.38],
    growth: [0.01, 0.07],
    dna: 0.02,
    capex: 0.02,
    volatility: [0.011, 0.02],
    dividendShare: 0.9,
    multiple: [8, 14]
  },
  {
    sic: "4911",
    description: "Electric Services",
    nouns: ["Power", "Electric", "Energy", "Utilities"],
    suffixes: ["Co.", "Corp.", "Holdings Inc."],
    grossMargin: [0.35, 0.5],
    operatingMargin: [0.14, 0.24],
    growth: [0.01, 0.05],
    dna: 0.14,
    capex: 0.3,
    volatility: [0.009, 0.016],
    dividendShare: 1,
    multiple: [14, 21]
  },
  {
    sic: "5331",
    description: "Retail-Variety Stores",
    nouns: ["Stores", "Outfitters", "Market", "Goods"],
    suffixes: ["Inc.", "Corp.", "Co."],
    grossMargin: [0.24, 0.42],
    operatingMargin: [0.02, 0.09],
    growth: [-0.03, 0.08],
    dna: 0.03,
    capex: 0.035,
    volatility: [0.015, 0.03],
    dividendShare: 0.55,
    multiple: [11, 24]
  },
  {
    sic: "3714",
    description: "Motor Vehicle Parts & Accessories",
    nouns: ["Automotive", "Components", "Drivetrain", "Mobility"],
    suffixes: ["Inc.", "Corp."],
    grossMargin: [0.14, 0.26],
    operatingMargin: [0.03, 0.11],
    growth: [0, 0.07],
    dna: 0.05,
    capex: 0.06,
    volatility: [0.017, 0.03],
    dividendShare: 0.5,
    multiple: [8, 15]
  },
  {
    sic: "1311",
    description: "Crude Petroleum & Natural Gas",
    nouns: ["Energy", "Resources", "Petroleum", "Exploration"],
    suffixes: ["Corp.", "Inc.", "Co."],
    grossMargin: [0.3, 0.55],
    operatingMargin: [0.08, 0.32],
    growth: [-0.05, 0.06],
    dna: 0.17,
    capex: 0.24,
    volatility: [0.02, 0.035],
    dividendShare: 0.7,
    multiple: [7, 13]
  },
  {
    sic: "3841",
    description: "Surgical & Medical Instruments & Apparatus",
    nouns: ["Medical", "Surgical", "Diagnostics", "Health"],
    suffixes: ["Inc.", "Corp."],
    grossMargin: [0.5, 0.72],
    operatingMargin: [-0.15, 0.25],
    growth: [0.03, 0.18],
    dna: 0.05,
    capex: 0.05,
    volatility: [0.016, 0.032],
    dividendShare: 0.3,
    multiple: [20, 38]
  },
  {
    sic: "4813",
    description: "Telephone Communications (No Radiotelephone)",
    nouns: ["Communications", "Telecom", "Networks", "Broadband"],
    suffixes: ["Inc.", "Corp."],
    grossMargin: [0.45, 0.62],
    operatingMargin: [0.08, 0.22],
    growth: [-0.01, 0.05],
    dna: 0.18,
    capex: 0.17,
    volatility: [0.012, 0.024],
    dividendShare: 0.75,
    multiple: [9, 17]
  },
  {
    sic: "6798",
    description: "Real Estate Investment Trusts",
    nouns: ["Realty", "Properties", "Residential", "Land"],
    suffixes: ["Trust", "Inc.", "Corp."],
    grossMargin: [0.55, 0.72],
    operatingMargin: [0.2, 0.4],
    growth: [0.01, 0.08],
    dna: 0.3,
    capex: 0.1,
    volatility: [0.012, 0.022],
    dividendShare: 1,
    multiple: [16, 30]
  },
  {
    sic: "2080",
    description: "Beverages",
    nouns: ["Beverage", "Brewing", "Springs", "Bottling"],
    suffixes: ["Co.", "Inc.", "Corp."],
    grossMargin: [0.38, 0.6],
    operatingMargin: [0.08, 0.25],
    growth: [0.01, 0.07],
    dna: 0.04,
    capex: 0.05,
    volatility: [0.01, 0.02],
    dividendShare: 0.8,
    multiple: [17, 27]
  },
  {
    sic: "3560",
    description: "General Industrial Machinery & Equipment",
    nouns: ["Industries", "Machinery", "Instruments", "Controls"],
    suffixes: ["Inc.", "Corp.", "Co."],
    grossMargin: [0.28, 0.45],
    operatingMargin: [0.06, 0.2],
    growth: [0.01, 0.09],
    dna: 0.045,
    capex: 0.04,
    volatility: [0.014, 0.026],
    dividendShare: 0.65,
    multiple: [15, 26]
  },
  {
    sic: "4512",
    description: "Air Transportation, Scheduled",
    nouns: ["Airways", "Air Lines", "Aviation"],
    suffixes: ["Inc.", "Corp.", "Holdings Inc."],
    grossMargin: [0.18, 0.32],
    operatingMargin: [-0.04, 0.1],
    growth: [0, 0.12],
    dna: 0.06,
    capex: 0.1,
    volatility: [0.02, 0.034],
    dividendShare: 0.2,
    multiple: [6, 12]
  }
]

/** Invented place and word stems: not the name of any company, combined with a sector's noun. */
const stems = [
  "Ashgrove",
  "Barrowmere",
  "Calder",
  "Dunlin",
  "Elderbank",
  "Fallowmere",
  "Glenhollow",
  "Harwick",
  "Ironvale",
  "Juniperway",
  "Kestrel Point",
  "Larchmont Vale",
  "Meadowrun",
  "Northwold",
  "Oakhaven",
  "Pellmoor",
  "Quillby",
  "Ravensholt",
  "Saltmarsh",
  "Thornbury",
  "Umberlee",
  "Vantmoor",
  "Wexcombe",
  "Yarrowdale",
  "Zennor",
  "Alderwick",
  "Brackenfield",
  "Cindervale",
  "Drystone",
  "Emberly",
  "Fernhollow",
  "Greywater",
  "Hollinsby",
  "Ivybridge",
  "Kettlewell",
  "Lowmoor",
  "Marrowfield",
  "Nettlecombe",
  "Orrisdale",
  "Pinewold",
  "Rushmere",
  "Silverbeck",
  "Tollgate",
  "Upperwick",
  "Wendlebury",
  "Amberhythe",
  "Blackwold",
  "Coppergate",
  "Deepdene",
  "Eastmere",
  "Foxcombe",
  "Goldhanger",
  "Heronsgate",
  "Inglemoor",
  "Kingsmere",
  "Longstrand",
  "Millbeck",
  "Newhythe",
  "Oxcombe",
  "Porthallow",
  "Redmarsh",
  "Stonecrop",
  "Tidewell",
  "Wildmere",
  "Briarholt",
  "Cloudberry",
  "Driftwood",
  "Evenlode",
  "Fenwick Cross",
  "Gorsedale",
  "Hazelmere",
  "Lantern Ridge",
  "Moorcastle",
  "Nightingale",
  "Otterburn",
  "Primrose Hill",
  "Rowanwick",
  "Sablecrest",
  "Tarnside",
  "Westerly"
]

const states = ["DE", "DE", "DE", "NV", "NY", "CA", "TX", "MD", "OH", "PA", "MA", "GA", "NJ", "MN", "WA"]
const fiscalYearEnds: ReadonlyArray<CompanyProfile["fiscalYearEnd"]> = [
  "1231",
  "1231",
  "1231",
  "1231",
  "1231",
  "1231",
  "0930",
  "0630",
  "0331",
  "0131"
]
const exchanges: ReadonlyArray<CompanyProfile["exchange"]> = ["Nasdaq", "Nasdaq", "NYSE", "NYSE", "NYSE American"]
const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const consonants = "BCDFGHJKLMNPRSTVWXZ"

const pick = <A>(items: ReadonlyArray<A>, u: number): A => items[Math.floor(u * items.length)]!

/** A 4-letter ticker from the name's initials plus drawn letters, not one taken already. */
const drawTicker = (name: string, taken: Set<string>, random: ReturnType<typeof stream>): string => {
  const initials = name
    .replace(/[^A-Za-z ]/g, "")
    .split(" ")
    .filter((w) => w.length > 0)
    .map((w) => w.charAt(0).toUpperCase())
    .join("")
  for (let attempt = 0; ; attempt++) {
    // The second and third letters are two different ones of J, Q, X and Z: real tickers almost never pair them
    // (the real-list test checks the result).
    const second = pick(["J", "Q", "X", "Z"], random.next())
    const third = pick(
      ["J", "Q", "X", "Z"].filter((l) => l !== second),
      random.next()
    )
    const head = (initials.charAt(0) || pick([...letters], random.next())) + second + third
    const tail = pick([...consonants], random.next())
    const ticker = head + tail
    if (!taken.has(ticker) || attempt > 1000) {
      taken.add(ticker)
      return ticker
    }
  }
}

/** The CUSIP issuer number of the n-th generated company: `9G` and four base-36 digits. */
const issuer6 = (n: number): string => `9G${n.toString(36).toUpperCase().padStart(4, "0")}`

/** The first `count` generated companies (a prefix of one fixed list: the 10th is the same whatever the count). */
export const generatedProfiles = (count: number = SimulatedGeneratedCompanies): ReadonlyArray<CompanyProfile> => {
  const random = stream(UNIVERSE_SEED, "universe")
  const taken = new Set<string>(SimulatedCompanies.map((c) => c.ticker))
  const names = new Set<string>(SimulatedCompanies.map((c) => c.name))
  const profiles: Array<CompanyProfile> = []
  for (let n = 0; n < Math.min(count, MaxGeneratedCompanies); n++) {
    const sector = pick(sectors, random.next())
    let name = ""
    do {
      name = `${pick(stems, random.next())} ${pick(sector.nouns, random.next())} ${pick(sector.suffixes, random.next())}`
    } while (names.has(name))
    names.add(name)
    const ticker = drawTicker(name, taken, random)
    // Sizes spread log-uniformly from $40 million to $60 billion of annual revenue.
    const revenue = Math.round(Math.exp(random.between(Math.log(4e7), Math.log(6e10))) / 1e6) * 1e6
    const between = (range: readonly [number, number]) => random.between(range[0], range[1])
    const operatingMargin = Math.round(between(sector.operatingMargin) * 1000) / 1000
    const pays = operatingMargin > 0.05 && random.next() < sector.dividendShare
    const price = random.between(8, 180)
    const marketCap = revenue * random.between(0.6, 6)
    const shares = Math.max(5_000_000, Math.round(marketCap / price / 1000) * 1000)
    const cik = String(FIRST_CIK + n)
    // One company in 24 has a second share class (its own ticker and CUSIP); one in 16 has no price feed.
    const classB =
      random.next() < 1 / 24
        ? [{ ticker: `${ticker}-B`, cusip: `${issuer6(n)}20${cusipCheckDigit(`${issuer6(n)}20`)}`, title: "CL B" }]
        : []
    const priced = random.next() >= 1 / 16
    const seasonalityTilt = random.between(-0.03, 0.05)
    profiles.push({
      cik,
      name,
      ticker,
      exchange: pick(exchanges, random.next()),
      sic: sector.sic,
      sicDescription: sector.description,
      fiscalYearEnd: pick(fiscalYearEnds, random.next()),
      cusip: cusip(issuer6(n)),
      stateOfIncorporation: pick(states, random.next()),
      revenueConcept: random.next() < 0.6 ? "RevenueFromContractWithCustomerExcludingAssessedTax" : "Revenues",
      baseRevenueUsd: revenue,
      growth: Math.round(between(sector.growth) * 1000) / 1000,
      seasonality: [
        0.25 - seasonalityTilt / 2,
        0.25 - seasonalityTilt / 4,
        0.25 + seasonalityTilt / 4,
        0.25 + seasonalityTilt / 2
      ],
      grossMargin: Math.round(between(sector.grossMargin) * 1000) / 1000,
      operatingMargin,
      dnaRatio: sector.dna,
      capexRatio: sector.capex,
      taxRate: operatingMargin > 0 ? 0.21 : 0,
      baseShares: shares,
      sharesDriftPerQuarter: pays ? -0.003 : operatingMargin < 0 ? 0.008 : 0.001,
      dividendPerShare: pays ? (Math.round(price * random.between(0.004, 0.012) * 100) / 100).toFixed(2) : null,
      dividendRaisePerYear: pays ? "0.01" : "0",
      longTermDebtUsd: Math.round((revenue * random.between(0, 1.2)) / 1e6) * 1e6,
      cashUsd: Math.round((revenue * random.between(0.05, 0.5)) / 1e6) * 1e6,
      startMultiple: Math.round(between(sector.multiple)),
      dailyVolatility: Math.round(between(sector.volatility) * 10000) / 10000,
      restatesYearsBack: null,
      split: null,
      historyYears: 1,
      priceDays: priced ? 400 : 0,
      insiderDays: 365,
      insiderCikBase: INSIDER_CIK_BASE + n * 4,
      ...(classB.length === 0 ? {} : { otherClasses: classB }),
      category:
        revenue > 5e9 ? "Large accelerated filer" : revenue > 5e8 ? "Accelerated filer" : "Non-accelerated filer"
    })
  }
  return profiles
}

/** The institutional managers filing 13F-HR reports on the generated companies, each holding many of them. */
export const generatedManagers: ReadonlyArray<{ readonly cik: string; readonly name: string; readonly holds: number }> =
  [
    "Aldgate Quarry Partners LLC",
    "Bellwether Fenn Capital LP",
    "Coldharbour Index Advisors Inc.",
    "Dovecote Street Investors LLC",
    "Evenwood Pension Trust",
    "Farrowdale Asset Management LLC",
    "Gannet Rock Capital LP",
    "Halyard & Pike Investment Counsel",
    "Inchmore Family Office LLC",
    "Jessamine Global Advisors LP",
    "Kittiwake Quantitative LLC",
    "Lodestar Meadow Capital Inc."
  ].map((name, i) => ({
    cik: String(MANAGER_CIK_BASE + i),
    name,
    holds: [520, 300, 200, 150, 120, 90, 80, 60, 45, 40, 30, 25][i]!
  }))
