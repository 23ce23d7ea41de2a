# shellcheck shell=bash
# The frames of SPEC §3 for the rig beacon (uuid 2f234454-..., major 1, minor 2, power -59) plus
# iBeacon (major 7), Eddystone-UID, -URL and -TLM: the config lines and the bytes expected on air.
TBF_IBEACON=0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600070002c5
TBF_IBEACON8=0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600080002c5
TBF_UID=0201060303aafe1716aafe00eeedd1ebeac04e5defa0170123456789ab0000
TBF_URL=0201060303aafe0e16aafe10ee016578616d706c6500
TBF_TLM='0201060303aafe1116aafe2000*'
TBF_ALL=("$TB_RIG_HEX" "$TBF_IBEACON" "$TBF_UID" "$TBF_URL" "$TBF_TLM")

# tbf_config [BLUETOOTH LINES...]: the rig beacon with every frame on; lines go into [bluetooth]
tbf_config() {
  tbd_config "[ibeacon]" "major = 7" "[eddystone]" 'namespace = "EDD1EBEAC04E5DEFA017"' \
    'instance = "0123456789ab"' 'url = "https://www.example.com/"' "tlm = true" "[bluetooth]" "$@"
}
